//! Images: each server's binary (and k6) packed `FROM scratch` into an image through the
//! engine's build call, from an in-memory tar context. Nothing is ever pulled. Also the
//! clean-up of everything wscbench made. All of it goes through [`Engine`], so a fake engine
//! can fail any step.

use std::collections::HashMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::catalog::Server;
use crate::catalog::local;
use crate::catalog::runtime;
use crate::docker::LABEL;
use crate::docker::{Engine, EngineError};

/// The label carrying the hash of what an image was built from.
pub const HASH_LABEL: &str = "wscbench.source-hash";
/// The tag of the load-generator image.
pub const K6_TAG: &str = "wscbench-k6";
/// The tag of the blaster image (`scenarios/k6-chat/cmd/blaster`), for `loadgen-capacity`.
pub const BLASTER_TAG: &str = "wscbench-blaster";
const K6_VERSION_LABEL: &str = "wscbench.k6-version";
const BINARY_SIZE_LABEL: &str = "wscbench.binary-size";
/// The label naming the host runtime a runtime server's image was assembled from.
const RUNTIME_LABEL: &str = "wscbench.runtime";

/// Why an image could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Local(#[from] local::LocalError),
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),
    #[error(transparent)]
    Runtime(#[from] crate::catalog::runtime::RuntimeError),
    #[error("reading {}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("k6 not found at {}: run scripts/setup (it builds k6 v1.8.1) or set WSCBENCH_K6", path.display())]
    NoK6 { path: std::path::PathBuf },
    #[error("the blaster is not at {}: run scripts/setup (it builds it beside k6)", path.display())]
    NoBlaster { path: std::path::PathBuf },
}

impl ImageError {
    /// A missing k6 or blaster is set-up; a wrapped error keeps its own class.
    pub fn class(&self) -> crate::ErrorClass {
        use crate::ErrorClass::*;
        match self {
            Self::Engine(e) => e.class(),
            Self::Local(e) => e.class(),
            Self::Catalog(e) => e.class(),
            Self::Runtime(e) => e.class(),
            Self::Io { .. } => Failure,
            Self::NoK6 { .. } | Self::NoBlaster { .. } => Setup,
        }
    }
}

/// A built (or reused) image.
#[derive(Debug, Clone)]
pub struct Image {
    /// Tag, e.g. `wsc-go`.
    pub tag: String,
    /// Hash of what it was built from.
    pub source_hash: String,
    /// Size of the binary inside, in bytes.
    pub binary_size_bytes: u64,
    /// Size of the image, in bytes.
    pub image_size_bytes: u64,
    /// False when an image with the same hash already existed.
    pub rebuilt: bool,
    /// For the k6 image: the k6 version.
    pub version: Option<String>,
}

/// Builds the server's image unless one built from the same sources exists.
pub async fn build_server_image(
    engine: &dyn Engine,
    server: &Server,
    force: bool,
) -> Result<Image, ImageError> {
    if let Some(spec) = &server.runtime {
        return build_runtime_image(engine, server, spec, force).await;
    }
    let hash = server.source_hash()?;
    if !force && let Some(image) = existing(engine, &server.tag, &hash).await? {
        return Ok(image);
    }
    let built = local::build(server).await?;
    let binary = std::fs::read(&built.binary).map_err(|source| ImageError::Io {
        path: built.binary.clone(),
        source,
    })?;
    let labels = server_labels(server, &hash, binary.len());
    build_scratch_image(engine, &server.tag, "server", &binary, &labels).await?;
    just_built(engine, &server.tag, &hash).await
}

/// The labels of a server's image: ours, its sources' hash, its id and what it ships.
fn server_labels(
    server: &Server,
    hash: &str,
    binary_bytes: impl ToString,
) -> HashMap<String, String> {
    HashMap::from([
        (LABEL.to_string(), "1".to_string()),
        (HASH_LABEL.to_string(), hash.to_string()),
        ("wscbench.server".to_string(), server.id.clone()),
        (BINARY_SIZE_LABEL.to_string(), binary_bytes.to_string()),
    ])
}

/// The image of `tag` with `hash` that a build just made, marked rebuilt.
async fn just_built(engine: &dyn Engine, tag: &str, hash: &str) -> Result<Image, ImageError> {
    let mut image = existing(engine, tag, hash)
        .await?
        .ok_or_else(|| EngineError::Build {
            tag: tag.to_string(),
            message: "the build finished but the image is not there".into(),
        })?;
    image.rebuilt = true;
    Ok(image)
}

/// A runtime server's image, assembled from the host's runtime and the server's files
/// ([`runtime`]) unless one built from the same sources and the same runtime exists. Its
/// "binary" size is every byte the image holds: runtime, libraries, standard library, server.
async fn build_runtime_image(
    engine: &dyn Engine,
    server: &Server,
    spec: &runtime::RuntimeSpec,
    force: bool,
) -> Result<Image, ImageError> {
    // The build installs the server's packages (npm ci, pip install --target) if missing.
    local::build(server).await?;
    let probe = runtime::probe(&server.id, &server.dir, spec).await?;
    let files = runtime::collect(&server.dir, spec, &probe)?;
    let hash = format!(
        "{}-{}",
        server.source_hash()?,
        runtime::fingerprint(&probe, &files)
    );
    if !force && let Some(image) = existing(engine, &server.tag, &hash).await? {
        return Ok(image);
    }
    let context = runtime::context(spec, &probe, &files)?;
    let mut labels = server_labels(server, &hash, context.payload_bytes);
    labels.insert(
        RUNTIME_LABEL.to_string(),
        probe.executable.display().to_string(),
    );
    build_context_image(engine, &server.tag, context.tar, &labels).await?;
    just_built(engine, &server.tag, &hash).await
}

/// Builds the k6 image from the host's k6 binary unless the same binary is already packed.
pub async fn build_k6_image(
    engine: &dyn Engine,
    k6: &Path,
    force: bool,
) -> Result<Image, ImageError> {
    let binary = std::fs::read(k6).map_err(|_| ImageError::NoK6 {
        path: k6.to_owned(),
    })?;
    let version = std::process::Command::new(k6)
        .arg("version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            s.split_whitespace()
                .find(|w| w.starts_with('v'))
                .map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".into());
    build_tool_image(engine, K6_TAG, "k6", &binary, Some(version), force).await
}

/// Builds the blaster image from the host's blaster binary unless the same binary is packed.
pub async fn build_blaster_image(
    engine: &dyn Engine,
    blaster: &Path,
    force: bool,
) -> Result<Image, ImageError> {
    let binary = std::fs::read(blaster).map_err(|_| ImageError::NoBlaster {
        path: blaster.to_owned(),
    })?;
    build_tool_image(engine, BLASTER_TAG, "blaster", &binary, None, force).await
}

/// Packs a tool's binary (k6, the blaster) under `tag`, unless the same binary is there.
async fn build_tool_image(
    engine: &dyn Engine,
    tag: &str,
    name: &str,
    binary: &[u8],
    version: Option<String>,
    force: bool,
) -> Result<Image, ImageError> {
    let hash = hex::encode(&Sha256::digest(binary)[..12]);
    if !force && let Some(image) = existing(engine, tag, &hash).await? {
        return Ok(image);
    }
    let mut labels = HashMap::from([
        (LABEL.to_string(), "1".to_string()),
        (HASH_LABEL.to_string(), hash.clone()),
        (BINARY_SIZE_LABEL.to_string(), binary.len().to_string()),
    ]);
    if let Some(version) = version {
        labels.insert(K6_VERSION_LABEL.to_string(), version);
    }
    build_scratch_image(engine, tag, name, binary, &labels).await?;
    let mut image = existing(engine, tag, &hash)
        .await?
        .ok_or_else(|| EngineError::Build {
            tag: tag.into(),
            message: "the build finished but the image is not there".into(),
        })?;
    image.rebuilt = true;
    Ok(image)
}

/// The image under `tag`, if it exists and was built from `hash`.
async fn existing(
    engine: &dyn Engine,
    tag: &str,
    hash: &str,
) -> Result<Option<Image>, EngineError> {
    let Some(inspect) = engine.inspect_image(tag).await? else {
        return Ok(None);
    };
    let labels = inspect.labels;
    if labels.get(HASH_LABEL).map(String::as_str) != Some(hash) {
        return Ok(None);
    }
    Ok(Some(Image {
        tag: tag.to_string(),
        source_hash: hash.to_string(),
        binary_size_bytes: labels
            .get(BINARY_SIZE_LABEL)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
        image_size_bytes: inspect.size_bytes,
        rebuilt: false,
        version: labels.get(K6_VERSION_LABEL).cloned(),
    }))
}

/// `FROM scratch`, the binary at `/<name>`, an empty `/tmp`, and the binary as entrypoint.
/// The image the tag named before is removed, so rebuilds leave no dangling images behind.
async fn build_scratch_image(
    engine: &dyn Engine,
    tag: &str,
    name: &str,
    binary: &[u8],
    labels: &HashMap<String, String>,
) -> Result<(), EngineError> {
    let dockerfile = format!(
        "FROM scratch\nCOPY {name} /{name}\nCOPY tmp /tmp\nENV HOME=/tmp\nENTRYPOINT [\"/{name}\"]\n"
    );
    let context = tar_context(&dockerfile, name, binary).map_err(|e| EngineError::Build {
        tag: tag.into(),
        message: format!("packing the build context: {e}"),
    })?;
    build_context_image(engine, tag, context, labels).await
}

/// Builds `tag` from a tar context; the image the tag named before is removed, so rebuilds
/// leave no dangling images behind.
async fn build_context_image(
    engine: &dyn Engine,
    tag: &str,
    context: Vec<u8>,
    labels: &HashMap<String, String>,
) -> Result<(), EngineError> {
    // Unknown is fine: the old image is only removed to save space.
    let previous = engine.inspect_image(tag).await.ok().flatten().map(|i| i.id);
    engine.build_image(tag, context, labels).await?;
    let current = engine.inspect_image(tag).await.ok().flatten().map(|i| i.id);
    if let Some(old) = previous.filter(|old| Some(old) != current.as_ref()) {
        // Still in use by a container, or already gone: either way nothing to do.
        let _ = engine.remove_image(&old).await;
    }
    Ok(())
}

/// What [`clean`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleaned {
    /// Containers removed.
    pub containers: usize,
    /// Images removed.
    pub images: usize,
}

/// Why [`clean`] stopped, with what it had removed by then.
#[derive(Debug, thiserror::Error)]
#[error("{source} (removed {} container(s) and {} image(s) before that)", done.containers, done.images)]
pub struct CleanError {
    /// What was removed before the failure.
    pub done: Cleaned,
    /// The failed call.
    #[source]
    pub source: EngineError,
}

/// Removes every container wscbench made, then (unless `keep_images`) every image it built.
/// Stops at the first failure, saying what it had removed.
pub async fn clean(engine: &dyn Engine, keep_images: bool) -> Result<Cleaned, CleanError> {
    let mut done = Cleaned::default();
    let fail = |done: Cleaned| move |source| CleanError { done, source };
    done.containers = engine.remove_all_containers().await.map_err(fail(done))?;
    if keep_images {
        return Ok(done);
    }
    for image in engine.list_images().await.map_err(fail(done))? {
        engine
            .remove_image(&image.id)
            .await
            .map_err(|source| CleanError {
                done,
                source: EngineError::Failed {
                    action: format!("removing image {}", image.tags.join(", ")),
                    message: source.to_string(),
                },
            })?;
        done.images += 1;
    }
    Ok(done)
}

impl CleanError {
    /// The class of the call that failed.
    pub fn class(&self) -> crate::ErrorClass {
        self.source.class()
    }
}

fn tar_context(dockerfile: &str, name: &str, binary: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut add = |path: &str, mode: u32, data: &[u8], kind: tar::EntryType| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, path, data)
    };
    add(
        "Dockerfile",
        0o644,
        dockerfile.as_bytes(),
        tar::EntryType::Regular,
    )?;
    add(name, 0o755, binary, tar::EntryType::Regular)?;
    add("tmp/", 0o1777, &[], tar::EntryType::Directory)?;
    tar.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_context_holds_the_dockerfile_the_binary_and_tmp() {
        let bytes = tar_context("FROM scratch\n", "server", b"\x7fELF").unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut entries: Vec<(String, u32)> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.path().unwrap().to_string_lossy().into_owned(),
                    e.header().mode().unwrap(),
                )
            })
            .collect();
        entries.sort();
        assert_eq!(
            entries,
            [
                ("Dockerfile".into(), 0o644),
                ("server".into(), 0o755),
                ("tmp/".into(), 0o1777)
            ]
        );
    }
}
