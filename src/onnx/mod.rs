//! ONNX admission audit, graph signature, fail-closed placement and a deterministic CPU oracle
//! (PoC 9E/9F in `../shared/spec/onnx-audit-hybrid-fallback.txt`). Nothing here can make the
//! NPU run anything while no compiled graph signature is approved.

pub mod audit;
pub mod checker;
pub mod crosscheck;
pub mod error;
pub mod fixtures;
pub mod isolate;
pub mod npz;
pub mod ort_engine;
pub mod pins;
pub mod policy;
pub mod proto;
pub mod refusal;
pub mod run;
pub mod signature;
pub mod tensor;
pub mod types;
