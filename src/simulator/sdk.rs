//! Where the vendor's driver is: `NBG_VIVANTE_SDK` (an extracted `prebuilt-sdk/x86_64_linux`),
//! else the folder `.ci/setup` installs into (`.ci/vendor/x86_64_linux` in the checkout the
//! running binary is in or was built from, `project::install_root`: never the working folder). The
//! pin (`simulator/sdk.json`, compiled in) names the wheel and every library's SHA-256; the
//! driver library itself is checked against it before a child loads it.

use std::path::PathBuf;

/// The pin, as committed.
pub use crate::onnx::pins::DRIVER_PIN as PIN;

/// The setup command that installs the driver (named by every "missing driver" error).
pub const SETUP: &str = "bash .ci/setup";

/// Why the driver cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    /// No SDK folder holds the library.
    #[error(
        "the vendor simulator driver is not installed ({path} has no lib/libOpenVX.so.1.3.0); install it with `{SETUP}` or set NBG_VIVANTE_SDK to an extracted prebuilt-sdk/x86_64_linux"
    )]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The library is there but is not the pinned build.
    #[error(
        "{path}: SHA-256 {found} is not the pinned {pinned} (simulator/sdk.json); reinstall with `{SETUP}`"
    )]
    Mismatch {
        /// The library.
        path: PathBuf,
        /// Its SHA-256.
        found: String,
        /// The pin.
        pinned: String,
    },
    /// It could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// An installed, verified SDK.
#[derive(Clone, Debug)]
pub struct Sdk {
    /// The `x86_64_linux` folder.
    pub dir: PathBuf,
    /// The wheel it came from (`acuitylite 6.57.1`).
    pub wheel: String,
    /// The SDK's own build string (first line of its `VERSION` file).
    pub build: String,
    /// SHA-256 of `libOpenVX.so.1.3.0`.
    pub openvx_sha256: String,
}

fn pin() -> serde_json::Value {
    // Invariant: `simulator/sdk.json` is committed JSON, read by `.ci/vendor_sdk.py` as well;
    // `tests/integration/vendor.rs` parses it.
    serde_json::from_str(PIN).unwrap_or_default()
}

/// The folder to use: the environment's, else the project's default.
pub fn dir() -> PathBuf {
    match std::env::var_os("NBG_VIVANTE_SDK").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => crate::project::install_root().join(".ci/vendor/x86_64_linux"),
    }
}

/// The driver's configuration library (`lib/libEmulator.so`) alone, verified against its own
/// pin: what naming a PID needs, without reading and hashing the whole driver.
pub fn emulator_library() -> Result<Vec<u8>, SdkError> {
    let dir = dir();
    let lib = dir.join("lib/libEmulator.so");
    if !lib.is_file() {
        return Err(SdkError::Missing { path: dir });
    }
    let bytes = std::fs::read(&lib).map_err(|source| SdkError::Io {
        path: lib.clone(),
        source,
    })?;
    let found = crate::digest::Hash256::of(&bytes).hex();
    let pinned = pin()["libraries"]["lib/libEmulator.so"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if found != pinned {
        return Err(SdkError::Mismatch {
            path: lib,
            found,
            pinned,
        });
    }
    Ok(bytes)
}

/// Find and verify the driver.
pub fn locate() -> Result<Sdk, SdkError> {
    let dir = dir();
    let lib = dir.join("lib/libOpenVX.so.1.3.0");
    if !lib.is_file() {
        return Err(SdkError::Missing { path: dir });
    }
    // Absolute: the child runs in its own folder.
    let dir = dir.canonicalize().map_err(|source| SdkError::Io {
        path: dir.clone(),
        source,
    })?;
    let lib = dir.join("lib/libOpenVX.so.1.3.0");
    let bytes = std::fs::read(&lib).map_err(|source| SdkError::Io {
        path: lib.clone(),
        source,
    })?;
    let found = crate::digest::Hash256::of(&bytes).hex();
    let p = pin();
    let pinned = p["libraries"]["lib/libOpenVX.so.1.3.0"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if found != pinned {
        return Err(SdkError::Mismatch {
            path: lib,
            found,
            pinned,
        });
    }
    let build = std::fs::read_to_string(dir.join("VERSION"))
        .ok()
        .and_then(|v| v.lines().next().map(str::to_string))
        .unwrap_or_default();
    Ok(Sdk {
        wheel: format!(
            "{} {}",
            p["wheel"]["package"].as_str().unwrap_or_default(),
            p["wheel"]["version"].as_str().unwrap_or_default()
        ),
        build,
        openvx_sha256: found,
        dir,
    })
}

impl Sdk {
    /// The library holding the configuration table.
    pub fn emulator(&self) -> PathBuf {
        self.dir.join("lib/libEmulator.so")
    }

    /// The environment a driver child needs: the SDK folder, its libraries on the loader's
    /// path and the simulated configuration.
    pub fn child_env(&self, config: &str) -> Vec<(String, String)> {
        let lib = self.dir.join("lib");
        let mut ld = lib.display().to_string();
        if let Ok(old) = std::env::var("LD_LIBRARY_PATH")
            && !old.is_empty()
        {
            ld = format!("{ld}:{old}");
        }
        vec![
            ("VIVANTE_SDK_DIR".into(), self.dir.display().to_string()),
            ("LD_LIBRARY_PATH".into(), ld),
            ("VSIMULATOR_CONFIG".into(), config.into()),
            // The simulator's contiguous pool: without it one process maps about 4.3 GB and
            // takes 2-12 s; with 256 MiB, about 360 MB, and the files are byte-identical
            // (measured, notebooks/vendor-toolchain.md).
            ("VSIMULATOR_CONTIGUOUS_SIZE".into(), "268435456".into()),
        ]
    }

    /// The driver as `--json` records it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "wheel": self.wheel,
            "build": self.build,
            "libopenvx_sha256": self.openvx_sha256,
        })
    }
}
