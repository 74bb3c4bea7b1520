//! Many compiles at once (the controls and the capture sets): grouped by configuration,
//! network name and pass, each group compiled in one driver context (`Request::CompileBatch`),
//! the groups spread over `child::children()` driver children. The driver compiles the shader
//! programs a graph needs once per context: a convolution's cost 9-10 s of CPU on every
//! target, the next graph that needs them 0.02 s (measured, notebooks/performance.md). The
//! files are those of lone compiles, byte for byte: `nbg verify-generated` compares every one
//! with the committed file, each of which was written by a batch of the same grouping.

use super::child::{self, ChildFailure, Kept, Limits};
use super::driver::{CompiledLine, Request};
use super::{Compiled, Config, Sdk, VendorError};
use std::collections::BTreeMap;

/// One compile asked of `all`.
pub struct Job<'a> {
    /// The configuration simulated.
    pub config: &'a Config,
    /// The ONNX model.
    pub model: &'a [u8],
    /// The embedded network name (`VIV_VX_NBG_NAME`), the driver's default when none.
    pub network_name: Option<String>,
    /// Jobs of different passes never share a context: a second compile of a model (a capture
    /// set's A2) runs in another child than the first, so that it repeats the whole compile.
    pub pass: u8,
}

/// Compiles in one child, at most (bounds the graphs one context holds).
pub const BATCH: usize = 32;

/// Compile every job: results in the order of `jobs`. A crash or hang is the result of the
/// compile the child was on; its group goes on from the next job in a new child.
pub fn all(sdk: &Sdk, jobs: &[Job]) -> Vec<Result<Compiled, VendorError>> {
    let mut groups: BTreeMap<(&str, Option<&str>, u8), Vec<usize>> = BTreeMap::new();
    for (k, j) in jobs.iter().enumerate() {
        groups
            .entry((&j.config.name, j.network_name.as_deref(), j.pass))
            .or_default()
            .push(k);
    }
    let groups: Vec<Vec<usize>> = groups.into_values().collect();
    let done = child::map_parallel(groups, |members| {
        let first = &jobs[members[0]];
        let models: Vec<&[u8]> = members.iter().map(|&k| jobs[k].model).collect();
        let results = batch(sdk, first.config, &models, first.network_name.as_deref());
        members.into_iter().zip(results).collect::<Vec<_>>()
    });
    let mut out: Vec<Option<Result<Compiled, VendorError>>> = jobs.iter().map(|_| None).collect();
    for (k, r) in done.into_iter().flatten() {
        out[k] = Some(r);
    }
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err(VendorError::ChildError("a compile not run".into()))))
        .collect()
}

/// Compile `models` for `config` in as few children as crashes allow, `BATCH` per child.
fn batch(
    sdk: &Sdk,
    config: &Config,
    models: &[&[u8]],
    network_name: Option<&str>,
) -> Vec<Result<Compiled, VendorError>> {
    let mut out: Vec<Option<Result<Compiled, VendorError>>> = Vec::with_capacity(models.len());
    // Refused models are answered here; the admitted ones go to children.
    let mut admitted: Vec<(usize, super::plan::Plan)> = Vec::new();
    for (k, m) in models.iter().enumerate() {
        match super::admitted_plan(m, &[]) {
            Ok(plan) => {
                admitted.push((k, plan));
                out.push(None);
            }
            Err(e) => out.push(Some(Err(e))),
        }
    }
    let mut next = 0;
    while next < admitted.len() {
        let run = &admitted[next..admitted.len().min(next + BATCH)];
        let n = run.len() as u32;
        // One lone compile's limits, and as much again for each further compile.
        let one = Limits::default();
        let limits = Limits {
            cpu_seconds: one.cpu_seconds * u64::from(n),
            wall: one.wall * n,
            ..one
        };
        let mut kept = Kept {
            files: vec![None; run.len()],
            ..Kept::default()
        };
        let request = Request::CompileBatch {
            plans: run.iter().map(|(_, p)| p.clone()).collect(),
        };
        let ended = child::run_keeping(
            sdk,
            &config.name,
            &request,
            &[],
            &child::save_env(network_name),
            limits,
            &mut kept,
        );
        let teardown = ended.as_ref().ok().and_then(|a| a.teardown_signal);
        let answered = kept.answered::<CompiledLine>(run.len(), |l| l.i);
        let mut judged = answered.len();
        for (j, l) in answered.into_iter().enumerate() {
            let k = run[j].0;
            out[k] = Some(super::compiled(
                config,
                models[k],
                kept.files[j].take(),
                l.response,
                l.seconds,
                teardown,
            ));
        }
        if judged < run.len() {
            // The child ended on compile `judged`: its result is how the child ended.
            out[run[judged].0] = Some(Err(match ended {
                Err(f) => VendorError::Child(f),
                Ok(child::Answer {
                    teardown_signal: Some(signal),
                    ..
                }) => VendorError::Child(ChildFailure::Signal {
                    signal,
                    name: crate::contain::signal_name(signal),
                }),
                Ok(a) => super::driver_response(a.response).err().unwrap_or_else(|| {
                    VendorError::ChildError(format!(
                        "the batch child stopped after {judged} of {} compiles",
                        run.len()
                    ))
                }),
            }));
            judged += 1;
        }
        next += judged;
    }
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err(VendorError::ChildError("a compile not run".into()))))
        .collect()
}
