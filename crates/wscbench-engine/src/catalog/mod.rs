//! The servers wscbench knows and how it gets them running outside a run's containers: the
//! catalog itself (here: servers found through their `server.toml` manifests, their variants
//! and selections; the scenarios are in [`crate::load::scenarios`]), the runtimes a server
//! may run on ([`runtime`]), local builds and processes ([`local`]), a process wscbench did
//! not start ([`process`]) and the images packed from them ([`images`]).
//!
//! Uses `net/` and `docker/`; never `verify/`, `load/`, `judge/` nor `runner/`.

pub mod images;
pub mod local;
pub mod process;
pub mod runtime;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use wscbench_results::Transport;

use crate::catalog::runtime::RuntimeSpec;

/// The group of the servers beside the two profiles (`servers/extra/`): never in a run
/// unless named by `--server` or `--group extra`, and reported in a group of their own.
pub const EXTRA_GROUP: &str = "extra";

/// Why the catalog could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A manifest could not be read or parsed.
    #[error("{}: {source}", path.display())]
    Manifest {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A manifest's id does not match where it lives.
    #[error("{}: id {id:?} does not match its directory (expected {expected:?})", path.display())]
    IdMismatch {
        path: PathBuf,
        id: String,
        expected: String,
    },
    /// No server matches a selection.
    #[error("no server matches {selection}; known servers: {known}")]
    NoMatch { selection: String, known: String },
    /// A manifest declares a variant that cannot be run.
    #[error("{}: variant {name:?}: {reason}", path.display())]
    BadVariant {
        path: PathBuf,
        name: String,
        reason: String,
    },
    /// `--variant` names a variant that none of the selected servers declares.
    #[error("unknown variant {name:?}: {known}")]
    UnknownVariant { name: String, known: String },
    /// A manifest's transports and `[not_offered]` disagree or name an unknown transport.
    #[error("{}: {reason}", path.display())]
    BadTransports { path: PathBuf, reason: String },
    /// `--transport` asks a server for a transport its manifest says it does not offer.
    #[error("{server} does not offer {transport}: {reason}")]
    NotOffered {
        server: String,
        transport: Transport,
        reason: String,
    },
    /// Reading the sources for the hash failed.
    #[error("reading {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl CatalogError {
    /// A selection or variant that matches nothing is the caller's usage; an unreadable or
    /// inconsistent manifest is a failure of the project.
    pub fn class(&self) -> crate::ErrorClass {
        use crate::ErrorClass::*;
        match self {
            Self::NoMatch { .. } | Self::UnknownVariant { .. } | Self::NotOffered { .. } => Usage,
            Self::Manifest { .. }
            | Self::BadTransports { .. }
            | Self::IdMismatch { .. }
            | Self::BadVariant { .. }
            | Self::Io { .. } => Failure,
        }
    }
}

/// One server's manifest (`servers/profile-x/lang/server.toml`), plus where it lives.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Server {
    /// `profile-b/go`
    pub id: String,
    /// Image tag, e.g. `wsc-go`.
    pub tag: String,
    /// `go`, `rust` or `zig`; `javascript` or `python` for the runtime servers.
    pub language: String,
    /// `a` or `b`, or [`EXTRA_GROUP`] for a server beside the profiles (run only when named).
    pub profile: String,
    /// The stack, for reports.
    pub framework: String,
    /// Shell command (run with `sh -c` in [`Server::dir`]) that builds a self-contained binary.
    pub build: String,
    /// Where the build leaves the binary, relative to [`Server::dir`].
    pub binary: PathBuf,
    /// Shell command that runs the server's unit tests.
    pub test: String,
    /// Build outputs, left out of the source hash.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Directories of code this server shares with its twin (e.g.
    /// `../../shared/go/chat`), relative to [`Server::dir`]. Their files are part
    /// of the source hash, so changing a shared core rebuilds both servers' images.
    #[serde(default)]
    pub shared: Vec<PathBuf>,
    /// Named variants: extra arguments and environment for the same binary and image,
    /// run as rows of their own (`wscbench run --variant NAME`), e.g.
    /// `[variants.gomaxprocs-1]` with `env = ["GOMAXPROCS=1"]`. Sorted by name.
    #[serde(default)]
    pub variants: BTreeMap<String, VariantSpec>,
    /// For a server that runs on a runtime: how its image is assembled from the host's
    /// runtime instead of from one static binary ([`crate::catalog::runtime`]). Its `binary` is then a
    /// launcher that runs it as a local process (for `verify`).
    #[serde(default)]
    pub runtime: Option<RuntimeSpec>,
    /// The transports the server offers (`ws`, `wss`, `ws+deflate`, `wss+deflate`; absent:
    /// `ws` only). It serves wss given `--tls-cert FILE --tls-key FILE` and accepts
    /// permessage-deflate given `--deflate`.
    #[serde(default = "only_ws")]
    pub transports: Vec<Transport>,
    /// One entry per transport the server does not offer: why, with the source of that
    /// reason (`wss = "std.crypto.tls holds a client only (lib/std/crypto/tls/Client.zig)"`).
    #[serde(default)]
    pub not_offered: BTreeMap<String, String>,
    /// The server's directory (not part of the manifest).
    #[serde(skip)]
    pub dir: PathBuf,
}

/// One `[variants.NAME]` table of a manifest.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// Extra arguments after the server's own `--host` and `--port`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment, each `KEY=value`.
    #[serde(default)]
    pub env: Vec<String>,
    /// Another binary the server's `build` leaves (relative to [`Server::dir`]), for a
    /// variant that is a different link of the same source (e.g. against another build of a
    /// C library); it gets an image of its own, tagged `TAG-NAME`.
    #[serde(default)]
    pub binary: Option<PathBuf>,
    /// Run it by default (when `--variant` is not given), beside the plain server.
    #[serde(default)]
    pub bench: bool,
}

/// What `--variant` takes besides a variant's name: the plain server, and every row.
pub const DEFAULT_VARIANT: &str = "default";
/// `--variant all`: the plain server and every variant it declares.
pub const ALL_VARIANTS: &str = "all";

fn only_ws() -> Vec<Transport> {
    vec![Transport::Ws]
}

impl Server {
    /// The server a row of variant `name` runs: itself, or for a variant with its own
    /// binary, the same server with that binary and its own image tag (`TAG-NAME`).
    pub fn for_variant(&self, name: &str) -> Server {
        match self.variants.get(name).and_then(|spec| spec.binary.clone()) {
            Some(binary) => Server {
                tag: format!("{}-{name}", self.tag),
                binary,
                ..self.clone()
            },
            None => self.clone(),
        }
    }

    /// Whether the server offers `transport`; if not, the manifest's reason (or, for a
    /// manifest that declares no transports, that it offers `ws` only).
    pub fn offers(&self, transport: Transport) -> Result<(), String> {
        if self.transports.contains(&transport) {
            return Ok(());
        }
        Err(self
            .not_offered
            .get(transport.as_str())
            .cloned()
            .unwrap_or_else(|| "its server.toml declares no transports, so ws only".into()))
    }

    /// Checks every transport of `asked`: the first one not offered is a usage error that
    /// names the server and the manifest's reason.
    pub fn check_transports(&self, asked: &[Transport]) -> Result<(), CatalogError> {
        for &transport in asked {
            self.offers(transport)
                .map_err(|reason| CatalogError::NotOffered {
                    server: self.id.clone(),
                    transport,
                    reason,
                })?;
        }
        Ok(())
    }

    /// `ws, wss` and `not offered: ws+deflate (reason)`, for `list`.
    pub fn describe_transports(&self) -> (String, Vec<String>) {
        let offered: Vec<&str> = self.transports.iter().map(|t| t.as_str()).collect();
        let not: Vec<String> = Transport::ALL
            .iter()
            .filter_map(|&t| self.offers(t).err().map(|reason| format!("{t}: {reason}")))
            .collect();
        (offered.join(", "), not)
    }

    /// The runnable variant `name`, if the manifest declares it.
    pub fn variant(&self, name: &str) -> Option<Variant> {
        self.variants.get(name).map(|spec| Variant {
            name: name.to_string(),
            args: spec.args.clone(),
            env: spec.env.clone(),
        })
    }

    /// `gomaxprocs-1 (GOMAXPROCS=1)`, one per variant, for `list --variants` and errors.
    pub fn describe_variants(&self) -> Vec<String> {
        self.variants
            .iter()
            .map(|(name, spec)| {
                let binary = spec
                    .binary
                    .as_ref()
                    .map(|b| format!("binary {}", b.display()));
                let what: Vec<&str> = binary
                    .iter()
                    .chain(&spec.env)
                    .chain(&spec.args)
                    .map(String::as_str)
                    .collect();
                let bench = if spec.bench {
                    ", in the default run"
                } else {
                    ""
                };
                format!("{name} ({}{bench})", what.join(" "))
            })
            .collect()
    }

    /// The built binary's full path.
    pub fn binary_path(&self) -> PathBuf {
        self.dir.join(&self.binary)
    }

    /// A stable hash of every source file of this server and of the shared code it
    /// builds from (build outputs excluded), so that an image built from the same
    /// sources can be reused.
    pub fn source_hash(&self) -> Result<String, CatalogError> {
        // (the name hashed, the file read): a shared file is named by its path as
        // the manifest gives it, so it can never collide with one of the server's own.
        let mut files = Vec::new();
        let mut own = Vec::new();
        collect_files(&self.dir, &self.dir, &self.exclude, &mut own)?;
        files.extend(own.into_iter().map(|rel| (rel.clone(), self.dir.join(rel))));
        for shared in &self.shared {
            let root = self.dir.join(shared);
            let mut found = Vec::new();
            collect_files(&root, &root, SHARED_BUILD_OUTPUTS, &mut found)?;
            files.extend(
                found
                    .into_iter()
                    .map(|rel| (shared.join(&rel), root.join(rel))),
            );
        }
        files.sort();
        let mut hasher = Sha256::new();
        for (name, path) in files {
            let bytes = fs::read(&path).map_err(|source| CatalogError::Io { path, source })?;
            hasher.update(name.to_string_lossy().as_bytes());
            hasher.update([0]);
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
        Ok(hex::encode(&hasher.finalize()[..12]))
    }
}

/// What building or testing a shared core can leave in its directory (cargo's
/// `target`, a stray `go build`'s `bin`, zig's `zig-out`): never sources. Its
/// `Cargo.lock` is not a source either: each server's own lock file decides.
const SHARED_BUILD_OUTPUTS: &[&str] = &["target", "bin", "zig-out", "Cargo.lock"];

fn collect_files(
    root: &Path,
    dir: &Path,
    exclude: &[impl AsRef<Path>],
    out: &mut Vec<PathBuf>,
) -> Result<(), CatalogError> {
    let entries = fs::read_dir(dir).map_err(|source| CatalogError::Io {
        path: dir.to_owned(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| CatalogError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path).to_owned();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // Hidden entries are caches (.zig-cache) or editor state, never sources.
        if name.starts_with('.') || exclude.iter().any(|e| rel == e.as_ref()) {
            continue;
        }
        let kind = entry.file_type().map_err(|source| CatalogError::Io {
            path: path.clone(),
            source,
        })?;
        if kind.is_dir() {
            collect_files(root, &path, exclude, out)?;
        } else if kind.is_file() {
            out.push(rel);
        }
    }
    Ok(())
}

/// Every server found under `servers_dir` (`profile-*/*/server.toml`), sorted by id.
pub fn discover(servers_dir: &Path) -> Result<Vec<Server>, CatalogError> {
    let mut servers = Vec::new();
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| CatalogError::Io { path, source }
    };
    let mut profiles: Vec<_> = fs::read_dir(servers_dir)
        .map_err(io(servers_dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    profiles.sort();
    for profile in profiles {
        let mut langs: Vec<_> = fs::read_dir(&profile)
            .map_err(io(&profile))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        langs.sort();
        for dir in langs {
            let manifest = dir.join("server.toml");
            if manifest.is_file() {
                servers.push(load_manifest(&manifest, servers_dir)?);
            }
        }
    }
    servers.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(servers)
}

/// Reads one manifest and checks that its id matches its place.
pub fn load_manifest(path: &Path, servers_dir: &Path) -> Result<Server, CatalogError> {
    let err = |source: Box<dyn std::error::Error + Send + Sync>| CatalogError::Manifest {
        path: path.to_owned(),
        source,
    };
    let text = fs::read_to_string(path).map_err(|e| err(e.into()))?;
    let mut server: Server = toml::from_str(&text).map_err(|e| err(e.into()))?;
    let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
    let expected = dir
        .strip_prefix(servers_dir)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    if server.id != expected {
        return Err(CatalogError::IdMismatch {
            path: path.to_owned(),
            id: server.id,
            expected,
        });
    }
    for (name, spec) in &server.variants {
        if let Err(reason) = check_variant(name, spec) {
            return Err(CatalogError::BadVariant {
                path: path.to_owned(),
                name: name.clone(),
                reason,
            });
        }
    }
    check_transports(&server).map_err(|reason| CatalogError::BadTransports {
        path: path.to_owned(),
        reason,
    })?;
    server.dir = dir;
    Ok(server)
}

/// Every transport named is known, none is both offered and not, `ws` is offered, and a
/// manifest that lists its transports gives a reason for each one it leaves out.
fn check_transports(server: &Server) -> Result<(), String> {
    if !server.transports.contains(&Transport::Ws) {
        return Err(
            "transports must include ws, the baseline every other one is compared with".into(),
        );
    }
    for (name, reason) in &server.not_offered {
        let transport: Transport = name.parse().map_err(|e| format!("[not_offered]: {e}"))?;
        if server.transports.contains(&transport) {
            return Err(format!(
                "{transport} is both in transports and in [not_offered]"
            ));
        }
        if reason.trim().is_empty() {
            return Err(format!("[not_offered] {transport}: the reason is empty"));
        }
    }
    let declared = server.transports.len() > 1 || !server.not_offered.is_empty();
    if let Some(missing) = Transport::ALL.iter().find(|t| {
        declared && !server.transports.contains(t) && !server.not_offered.contains_key(t.as_str())
    }) {
        return Err(format!(
            "{missing} is neither in transports nor in [not_offered]: give the reason it is not offered, with its source"
        ));
    }
    Ok(())
}

/// A variant's name goes into ids, file names and container names; its environment must be
/// `KEY=value`; and it must change something, or it would only measure noise twice.
fn check_variant(name: &str, spec: &VariantSpec) -> Result<(), String> {
    if name == DEFAULT_VARIANT || name == ALL_VARIANTS {
        return Err(format!("{name:?} is reserved for --variant"));
    }
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if name.is_empty() || !name.chars().all(valid) || name.starts_with('-') {
        return Err("a name is lower-case letters, digits and '-', e.g. gomaxprocs-1".into());
    }
    if spec.args.is_empty() && spec.env.is_empty() && spec.binary.is_none() {
        return Err("declares neither args, env nor binary".into());
    }
    for entry in &spec.env {
        match entry.split_once('=') {
            Some((key, _))
                if !key.is_empty()
                    && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {}
            _ => return Err(format!("env entry {entry:?} is not KEY=value")),
        }
    }
    Ok(())
}

/// A named variant of a server: extra arguments and environment for the same image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The name, as in `profile-b/go@gomaxprocs-1`.
    pub name: String,
    /// Extra arguments after the server's own.
    pub args: Vec<String>,
    /// Extra `KEY=value` environment.
    pub env: Vec<String>,
}

/// One row of a run: a server, as itself or as one of its variants.
pub type Row = (Server, Option<Variant>);

/// The rows `--variant` asks for: each server as itself and/or as its variants, in catalog
/// order, the plain server before its variants. No names: the plain servers only.
/// `default` is the plain server, `all` the plain server and every variant. A server that
/// has none of the named variants is left out (it is returned in the second list); a name
/// that no selected server declares is an error that lists the variants there are.
pub fn with_variants(
    servers: &[Server],
    names: &[String],
) -> Result<(Vec<Row>, Vec<String>), CatalogError> {
    if names.is_empty() {
        // The plain servers, and the variants their manifests run by default (`bench`).
        let mut rows = Vec::new();
        for server in servers {
            rows.push((server.clone(), None));
            for (name, spec) in &server.variants {
                if spec.bench {
                    rows.push((server.for_variant(name), server.variant(name)));
                }
            }
        }
        return Ok((rows, Vec::new()));
    }
    let all = names.iter().any(|n| n == ALL_VARIANTS);
    for name in names {
        if name == ALL_VARIANTS || name == DEFAULT_VARIANT {
            continue;
        }
        if !servers.iter().any(|s| s.variants.contains_key(name)) {
            let known: Vec<String> = servers
                .iter()
                .map(|s| match s.variants.keys().cloned().collect::<Vec<_>>() {
                    v if v.is_empty() => format!("{} has none", s.id),
                    v => format!("{} has {}", s.id, v.join(", ")),
                })
                .collect();
            return Err(CatalogError::UnknownVariant {
                name: name.clone(),
                known: format!(
                    "{} (and every server has default; all is every one)",
                    known.join("; ")
                ),
            });
        }
    }
    let mut rows = Vec::new();
    let mut left_out = Vec::new();
    for server in servers {
        let before = rows.len();
        if all || names.iter().any(|n| n == DEFAULT_VARIANT) {
            rows.push((server.clone(), None));
        }
        for name in server.variants.keys() {
            if all || names.contains(name) {
                rows.push((server.for_variant(name), server.variant(name)));
            }
        }
        if rows.len() == before {
            left_out.push(server.id.clone());
        }
    }
    Ok((rows, left_out))
}

/// A selection of servers, as the CLI's `--server`, `--profile` and `--lang` give it.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Exact ids (`profile-b/go`); empty means any.
    pub ids: Vec<String>,
    /// Profiles (`a`, `b`); empty means any.
    pub profiles: Vec<String>,
    /// Languages (`go`, `rust`, `zig`); empty means any.
    pub languages: Vec<String>,
    /// Groups (`extra`): the servers of a group beside the profiles are picked only when
    /// their group or their id is named.
    pub groups: Vec<String>,
}

impl Selection {
    /// The servers this selection picks, in catalog order; an error if none.
    pub fn apply(&self, servers: &[Server]) -> Result<Vec<Server>, CatalogError> {
        let picked: Vec<Server> = servers
            .iter()
            .filter(|s| self.ids.is_empty() || self.ids.contains(&s.id))
            .filter(|s| {
                self.ids.contains(&s.id)
                    || if self.groups.is_empty() {
                        s.profile != EXTRA_GROUP
                    } else {
                        self.groups
                            .iter()
                            .any(|g| g.eq_ignore_ascii_case(&s.profile))
                    }
            })
            .filter(|s| {
                self.profiles.is_empty()
                    || self
                        .profiles
                        .iter()
                        .any(|p| p.eq_ignore_ascii_case(&s.profile))
            })
            .filter(|s| {
                self.languages.is_empty()
                    || self
                        .languages
                        .iter()
                        .any(|l| l.eq_ignore_ascii_case(&s.language))
            })
            .cloned()
            .collect();
        if picked.is_empty() {
            return Err(CatalogError::NoMatch {
                selection: self.describe(),
                known: servers
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        // An unknown explicit id is an error even when other ids matched: a typo must not shrink a run silently.
        if let Some(missing) = self
            .ids
            .iter()
            .find(|id| !servers.iter().any(|s| &s.id == *id))
        {
            return Err(CatalogError::NoMatch {
                selection: format!("--server {missing}"),
                known: servers
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(picked)
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        for id in &self.ids {
            parts.push(format!("--server {id}"));
        }
        for p in &self.profiles {
            parts.push(format!("--profile {p}"));
        }
        for l in &self.languages {
            parts.push(format!("--lang {l}"));
        }
        for g in &self.groups {
            parts.push(format!("--group {g}"));
        }
        if parts.is_empty() {
            "(all)".into()
        } else {
            parts.join(" ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_manifest(root: &Path, id: &str, tag: &str) {
        let dir = root.join(id);
        fs::create_dir_all(&dir).unwrap();
        let (profile, lang) = id.split_once('/').unwrap();
        fs::write(
            dir.join("server.toml"),
            format!(
                "id = \"{id}\"\ntag = \"{tag}\"\nlanguage = \"{lang}\"\nprofile = \"{}\"\nframework = \"x\"\n\
                 build = \"true\"\nbinary = \"bin/server\"\ntest = \"true\"\nexclude = [\"bin\"]\n",
                profile.trim_start_matches("profile-")
            ),
        )
        .unwrap();
    }

    fn append(root: &Path, id: &str, text: &str) {
        let path = root.join(id).join("server.toml");
        let mut manifest = fs::read_to_string(&path).unwrap();
        manifest.push_str(text);
        fs::write(path, manifest).unwrap();
    }

    #[test]
    fn a_manifest_without_transports_offers_ws_only() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/go", "wsc-go");
        let server = &discover(root.path()).unwrap()[0];
        assert_eq!(server.transports, [Transport::Ws]);
        assert!(server.check_transports(&[Transport::Ws]).is_ok());
        let err = server.check_transports(&[Transport::Wss]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "profile-b/go does not offer wss: its server.toml declares no transports, so ws only"
        );
        assert_eq!(err.class(), crate::ErrorClass::Usage);
    }

    #[test]
    fn a_transport_not_offered_is_refused_with_the_manifests_reason() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/zig", "wsc-zig");
        append(
            root.path(),
            "profile-b/zig",
            "transports = [\"ws\", \"ws+deflate\"]\n[not_offered]\n\
             wss = \"std.crypto.tls holds a client only (lib/std/crypto/tls/Client.zig)\"\n\
             \"wss+deflate\" = \"no wss (see wss)\"\n",
        );
        let server = &discover(root.path()).unwrap()[0];
        assert!(
            server
                .check_transports(&[Transport::Ws, Transport::WsDeflate])
                .is_ok()
        );
        let err = server
            .check_transports(&[Transport::Ws, Transport::Wss])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "profile-b/zig does not offer wss: std.crypto.tls holds a client only (lib/std/crypto/tls/Client.zig)"
        );
        let (offered, not) = server.describe_transports();
        assert_eq!(offered, "ws, ws+deflate");
        assert_eq!(not.len(), 2);
    }

    #[test]
    fn a_manifest_that_leaves_a_transport_out_without_a_reason_is_refused() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/go", "wsc-go");
        append(
            root.path(),
            "profile-b/go",
            "transports = [\"ws\", \"wss\"]\n",
        );
        let err = discover(root.path()).unwrap_err();
        assert!(matches!(err, CatalogError::BadTransports { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("ws+deflate is neither in transports nor in [not_offered]"),
            "{err}"
        );
    }

    #[test]
    fn discovery_finds_manifests_sorted_by_id() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/go", "wsc-go");
        write_manifest(root.path(), "profile-a/go", "wsca-go");
        let servers = discover(root.path()).unwrap();
        let ids: Vec<_> = servers.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["profile-a/go", "profile-b/go"]);
        assert_eq!(
            servers[1].binary_path(),
            root.path().join("profile-b/go/bin/server")
        );
    }

    #[test]
    fn a_manifest_whose_id_disagrees_with_its_directory_is_refused() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/go", "wsc-go");
        fs::rename(
            root.path().join("profile-b/go"),
            root.path().join("profile-b/rust"),
        )
        .unwrap();
        assert!(matches!(
            discover(root.path()),
            Err(CatalogError::IdMismatch { .. })
        ));
    }

    #[test]
    fn selection_by_profile_and_language_and_unknown_ids() {
        let root = tempfile::tempdir().unwrap();
        for (id, tag) in [
            ("profile-a/go", "wsca-go"),
            ("profile-b/go", "wsc-go"),
            ("profile-b/zig", "wsc-zig"),
        ] {
            write_manifest(root.path(), id, tag);
        }
        let all = discover(root.path()).unwrap();
        let b = Selection {
            profiles: vec!["B".into()],
            ..Default::default()
        }
        .apply(&all)
        .unwrap();
        assert_eq!(b.len(), 2);
        let go = Selection {
            languages: vec!["go".into()],
            ..Default::default()
        }
        .apply(&all)
        .unwrap();
        assert_eq!(
            go.iter().map(|s| s.tag.as_str()).collect::<Vec<_>>(),
            ["wsca-go", "wsc-go"]
        );
        let typo = Selection {
            ids: vec!["profile-b/go".into(), "profile-b/goo".into()],
            ..Default::default()
        };
        let err = typo.apply(&all).unwrap_err().to_string();
        assert!(err.contains("profile-b/goo"), "{err}");
    }

    #[test]
    fn the_extra_group_is_left_out_unless_named_by_group_or_id() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/go", "wsc-go");
        let dir = root.path().join("extra/node-ws");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("server.toml"),
            "id = \"extra/node-ws\"\ntag = \"wscx-node-ws\"\nlanguage = \"javascript\"\n\
             profile = \"extra\"\nframework = \"x\"\nbuild = \"true\"\nbinary = \"server\"\n\
             test = \"true\"\n[runtime]\nname = \"Node.js\"\nprobe = [\"node\"]\n\
             files = [\"server.js\"]\nargs = [\"/app/server.js\"]\n",
        )
        .unwrap();
        let all = discover(root.path()).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].runtime.as_ref().unwrap().args, ["/app/server.js"]);
        let ids = |selection: Selection| -> Vec<String> {
            selection
                .apply(&all)
                .unwrap()
                .into_iter()
                .map(|s| s.id)
                .collect()
        };
        assert_eq!(ids(Selection::default()), ["profile-b/go"]);
        let group = Selection {
            groups: vec!["extra".into()],
            ..Default::default()
        };
        assert_eq!(ids(group), ["extra/node-ws"]);
        let named = Selection {
            ids: vec!["extra/node-ws".into(), "profile-b/go".into()],
            ..Default::default()
        };
        assert_eq!(ids(named), ["extra/node-ws", "profile-b/go"]);
    }

    #[test]
    fn the_source_hash_ignores_build_outputs_and_changes_with_sources() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/go", "wsc-go");
        let server = discover(root.path()).unwrap().remove(0);
        fs::write(server.dir.join("main.go"), "package main").unwrap();
        let before = server.source_hash().unwrap();
        fs::create_dir_all(server.dir.join("bin")).unwrap();
        fs::write(server.dir.join("bin/server"), "binary").unwrap();
        assert_eq!(server.source_hash().unwrap(), before);
        fs::write(server.dir.join("main.go"), "package main // changed").unwrap();
        assert_ne!(server.source_hash().unwrap(), before);
    }

    #[test]
    fn changing_a_shared_file_changes_the_hash_of_both_twins() {
        let root = tempfile::tempdir().unwrap();
        let core = root.path().join("shared/go/chat");
        fs::create_dir_all(&core).unwrap();
        fs::write(core.join("hub.go"), "package chat").unwrap();
        for (id, tag) in [("profile-a/go", "wsca-go"), ("profile-b/go", "wsc-go")] {
            write_manifest(root.path(), id, tag);
            let manifest = root.path().join(id).join("server.toml");
            let mut text = fs::read_to_string(&manifest).unwrap();
            text.push_str("shared = [\"../../shared/go/chat\"]\n");
            fs::write(&manifest, text).unwrap();
            fs::write(root.path().join(id).join("main.go"), "package main").unwrap();
        }
        let twins = discover(root.path()).unwrap();
        assert_eq!(twins[0].shared, [PathBuf::from("../../shared/go/chat")]);
        let hashes = || -> Vec<String> { twins.iter().map(|s| s.source_hash().unwrap()).collect() };
        let before = hashes();

        // Build outputs and hidden files in the shared core are not sources.
        fs::create_dir_all(core.join("target/debug")).unwrap();
        fs::write(core.join("target/debug/libchat.rlib"), "built").unwrap();
        fs::write(core.join(".hub.go.swp"), "editor").unwrap();
        assert_eq!(hashes(), before);

        fs::write(core.join("hub.go"), "package chat // changed").unwrap();
        let after = hashes();
        assert_ne!(after[0], before[0], "profile-a/go");
        assert_ne!(after[1], before[1], "profile-b/go");

        // A new shared file counts too.
        fs::write(core.join("member.go"), "package chat").unwrap();
        assert_ne!(hashes(), after);
    }

    #[test]
    fn a_missing_shared_directory_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        write_manifest(root.path(), "profile-b/go", "wsc-go");
        let mut server = discover(root.path()).unwrap().remove(0);
        server.shared = vec!["../../shared/nowhere".into()];
        assert!(matches!(server.source_hash(), Err(CatalogError::Io { .. })));
    }

    fn with_variants_text(root: &Path, id: &str, text: &str) -> Result<Server, CatalogError> {
        write_manifest(root, id, "wsc-go");
        let manifest = root.join(id).join("server.toml");
        let mut base = fs::read_to_string(&manifest).unwrap();
        base.push_str(text);
        fs::write(&manifest, base).unwrap();
        load_manifest(&manifest, root)
    }

    #[test]
    fn a_manifest_declares_variants_with_args_and_env_in_two_lines_each() {
        let root = tempfile::tempdir().unwrap();
        let server = with_variants_text(
            root.path(),
            "profile-b/go",
            "\n[variants.gomaxprocs-1]\nenv = [\"GOMAXPROCS=1\"]\n\n\
             [variants.batched]\nargs = [\"--write-batch\", \"64\"]\n",
        )
        .unwrap();
        assert_eq!(
            server.variant("gomaxprocs-1"),
            Some(Variant {
                name: "gomaxprocs-1".into(),
                args: vec![],
                env: vec!["GOMAXPROCS=1".into()],
            })
        );
        assert_eq!(
            server.variant("batched").unwrap().args,
            ["--write-batch", "64"]
        );
        assert_eq!(server.variant("nope"), None);
        assert_eq!(
            server.describe_variants(),
            ["batched (--write-batch 64)", "gomaxprocs-1 (GOMAXPROCS=1)"]
        );
    }

    #[test]
    fn bad_variants_are_refused_when_the_manifest_is_read() {
        for (text, says) in [
            ("[variants.x]\nenv = [\"GOMAXPROCS\"]\n", "not KEY=value"),
            ("[variants.x]\n", "declares neither args, env nor binary"),
            ("[variants.Fast]\nenv = [\"A=1\"]\n", "lower-case letters"),
            ("[variants.all]\nenv = [\"A=1\"]\n", "reserved"),
            ("[variants.default]\nenv = [\"A=1\"]\n", "reserved"),
            ("[variants.x]\nenvironment = [\"A=1\"]\n", "unknown field"),
            ("[variants.x]\nenv = \"A=1\"\n", "invalid type"),
        ] {
            let root = tempfile::tempdir().unwrap();
            let err = with_variants_text(root.path(), "profile-b/go", text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_variant_with_its_own_binary_gets_its_own_image_and_a_bench_variant_runs_by_default() {
        let root = tempfile::tempdir().unwrap();
        let zig = with_variants_text(
            root.path(),
            "profile-a/zig",
            "[variants.debian-lws]\nbinary = \"zig-out/bin/other\"\nbench = true\n\
             [variants.slow]\nargs = [\"--slow\"]\n",
        )
        .unwrap();
        let (rows, _) = with_variants(std::slice::from_ref(&zig), &[]).unwrap();
        let rows: Vec<(String, Option<String>, PathBuf)> = rows
            .into_iter()
            .map(|(s, v)| (s.tag, v.map(|v| v.name), s.binary))
            .collect();
        assert_eq!(
            rows,
            [
                ("wsc-go".to_string(), None, zig.binary.clone()),
                (
                    "wsc-go-debian-lws".to_string(),
                    Some("debian-lws".to_string()),
                    PathBuf::from("zig-out/bin/other")
                ),
            ]
        );
        // Named, or under `all`, an args-only variant keeps the server's image.
        let (rows, _) = with_variants(std::slice::from_ref(&zig), &["all".to_string()]).unwrap();
        let tags: Vec<&str> = rows.iter().map(|(s, _)| s.tag.as_str()).collect();
        assert_eq!(tags, ["wsc-go", "wsc-go-debian-lws", "wsc-go"]);
        let (rows, _) = with_variants(&[zig], &["default".to_string()]).unwrap();
        assert_eq!(rows.len(), 1, "--variant default is the plain server only");
    }

    #[test]
    fn variant_selection_keeps_catalog_order_and_names_the_known_variants() {
        let root = tempfile::tempdir().unwrap();
        let go = with_variants_text(
            root.path(),
            "profile-b/go",
            "[variants.gomaxprocs-1]\nenv = [\"GOMAXPROCS=1\"]\n[variants.gomaxprocs-2]\nenv = [\"GOMAXPROCS=2\"]\n",
        )
        .unwrap();
        write_manifest(root.path(), "profile-b/rust", "wsc-rust");
        let rust =
            load_manifest(&root.path().join("profile-b/rust/server.toml"), root.path()).unwrap();
        let servers = [go, rust];
        let labels = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            let (rows, left_out) = with_variants(&servers, &names).unwrap();
            let rows: Vec<String> = rows
                .iter()
                .map(|(s, v)| {
                    wscbench_results::dimensions::server_label(
                        &s.id,
                        v.as_ref().map(|v| v.name.as_str()),
                    )
                })
                .collect();
            (rows, left_out)
        };
        assert_eq!(labels(&[]).0, ["profile-b/go", "profile-b/rust"]);
        assert_eq!(
            labels(&["all"]).0,
            [
                "profile-b/go",
                "profile-b/go@gomaxprocs-1",
                "profile-b/go@gomaxprocs-2",
                "profile-b/rust"
            ]
        );
        assert_eq!(
            labels(&["gomaxprocs-2"]),
            (
                vec!["profile-b/go@gomaxprocs-2".to_string()],
                vec!["profile-b/rust".to_string()]
            )
        );
        assert_eq!(
            labels(&["default", "gomaxprocs-1"]).0,
            [
                "profile-b/go",
                "profile-b/go@gomaxprocs-1",
                "profile-b/rust"
            ]
        );
        let err = with_variants(&servers, &["gomaxprocs-3".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown variant \"gomaxprocs-3\": profile-b/go has gomaxprocs-1, gomaxprocs-2; \
             profile-b/rust has none (and every server has default; all is every one)"
        );
    }
}
