//! Runtime images: a server that runs on a runtime (Node.js, Python) packed `FROM scratch`
//! from what the host has — the runtime's executable, the shared libraries it and its
//! extension modules load (as `ldd` names them, the dynamic loader included), its standard
//! library — plus the server's own files and installed packages under `/app`. Nothing is
//! pulled. [`crate::catalog::images`] builds the image from the context made here.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// Where a runtime server's own files go in its image (also its working directory).
pub const APP_DIR: &str = "/app";

/// The `[runtime]` table of a manifest.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RuntimeSpec {
    /// The runtime's name, for errors and records, e.g. `node`.
    pub name: String,
    /// A program and its arguments that print, one per line, the runtime's executable
    /// (first line) and then every directory to copy whole (its standard library), e.g.
    /// `["node", "-e", "console.log(process.execPath)"]`. Run in the server's directory.
    pub probe: Vec<String>,
    /// Entry names left out of the copied directories wherever they occur; `config-*`
    /// matches by prefix.
    #[serde(default)]
    pub skip: Vec<String>,
    /// The server's own files and folders (installed packages included), relative to its
    /// directory, copied under `/app`.
    pub files: Vec<PathBuf>,
    /// Arguments after the executable and before the server's `--host` and `--port`, e.g.
    /// `["/app/server.js"]`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra `KEY=value` environment of the image.
    #[serde(default)]
    pub env: Vec<String>,
}

/// Why a runtime image could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The runtime is not installed on the host (its probe could not run).
    #[error(
        "{id} runs on {runtime}, which is not installed here (`{command}`: {said}); install it or run scripts/setup"
    )]
    Missing {
        id: String,
        runtime: String,
        command: String,
        said: String,
    },
    /// The probe ran but printed no executable that exists.
    #[error("{id}: the probe `{command}` of {runtime} printed no usable executable ({said})")]
    BadProbe {
        id: String,
        runtime: String,
        command: String,
        said: String,
    },
    /// `ldd` could not name a library an executable needs.
    #[error("{}: a shared library it needs is not on this host: {line}", path.display())]
    MissingLibrary { path: PathBuf, line: String },
    /// A file could not be read, or `ldd` not run.
    #[error("reading {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl RuntimeError {
    /// A runtime the host lacks is set-up; the rest is a failure.
    pub fn class(&self) -> crate::ErrorClass {
        match self {
            Self::Missing { .. } => crate::ErrorClass::Setup,
            _ => crate::ErrorClass::Failure,
        }
    }
}

/// What the probe found on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The runtime's executable, as the runtime names it (kept at that path in the image).
    pub executable: PathBuf,
    /// Directories copied whole, at the same paths.
    pub dirs: Vec<PathBuf>,
}

/// Runs the manifest's probe: a runtime that does not answer is [`RuntimeError::Missing`].
pub async fn probe(id: &str, dir: &Path, spec: &RuntimeSpec) -> Result<Probe, RuntimeError> {
    let command = spec.probe.join(" ");
    let missing = |said: String| RuntimeError::Missing {
        id: id.into(),
        runtime: spec.name.clone(),
        command: command.clone(),
        said,
    };
    let [program, args @ ..] = spec.probe.as_slice() else {
        return Err(missing("the manifest gives no probe".into()));
    };
    let output = tokio::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| missing(e.to_string()))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(missing(if said.is_empty() {
            output.status.to_string()
        } else {
            said
        }));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let executable = lines
        .next()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_file());
    let Some(executable) = executable else {
        return Err(RuntimeError::BadProbe {
            id: id.into(),
            runtime: spec.name.clone(),
            command,
            said: text.trim().to_string(),
        });
    };
    Ok(Probe {
        executable,
        dirs: lines.map(PathBuf::from).collect(),
    })
}

/// One file of the image: its path there and where its bytes are on the host.
type Files = BTreeMap<PathBuf, PathBuf>;

/// The image's files: the executable, the probe's directories, the server's files under
/// `/app`, and every shared library that an ELF file among them loads.
pub fn collect(dir: &Path, spec: &RuntimeSpec, probe: &Probe) -> Result<Files, RuntimeError> {
    let mut files = Files::new();
    files.insert(probe.executable.clone(), probe.executable.clone());
    for tree in &probe.dirs {
        walk(tree, tree, &spec.skip, &mut files)?;
    }
    let app = Path::new(APP_DIR);
    for own in &spec.files {
        let host = dir.join(own);
        if host.is_dir() {
            walk(&host, &app.join(own), &[], &mut files)?;
        } else {
            fs::metadata(&host).map_err(|source| RuntimeError::Io {
                path: host.clone(),
                source,
            })?;
            files.insert(app.join(own), host);
        }
    }
    let elves: Vec<(PathBuf, PathBuf)> = files
        .iter()
        .filter(|(_, host)| is_elf(host))
        .map(|(at, host)| (at.clone(), host.clone()))
        .collect();
    for (at, host) in elves {
        // An extension module whose library is missing could never be imported; only the
        // executable's own libraries must all be there.
        let required = at == probe.executable;
        for lib in needed_libraries(&host, required)? {
            files.insert(lib.clone(), lib);
        }
    }
    Ok(files)
}

fn walk(host: &Path, at: &Path, skip: &[String], files: &mut Files) -> Result<(), RuntimeError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| RuntimeError::Io { path, source }
    };
    for entry in fs::read_dir(host).map_err(io(host))? {
        let entry = entry.map_err(io(host))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let skipped = skip.iter().any(|s| match s.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *s,
        });
        if skipped {
            continue;
        }
        let path = entry.path();
        // Symbolic links are followed: the image holds the bytes at every name.
        let meta = fs::metadata(&path).map_err(io(&path))?;
        if meta.is_dir() {
            walk(&path, &at.join(&name), skip, files)?;
        } else if meta.is_file() {
            files.insert(at.join(&name), path);
        }
    }
    Ok(())
}

fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == *b"\x7fELF")
}

/// The libraries `ldd` names for an ELF file, the dynamic loader included. A static file
/// needs none. A library `ldd` cannot find is an error when `required`, skipped otherwise.
fn needed_libraries(elf: &Path, required: bool) -> Result<Vec<PathBuf>, RuntimeError> {
    let output = std::process::Command::new("ldd")
        .arg(elf)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| RuntimeError::Io {
            path: PathBuf::from("ldd"),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut libs = Vec::new();
    for line in text.lines() {
        if line.contains("not found") {
            if required {
                return Err(RuntimeError::MissingLibrary {
                    path: elf.to_owned(),
                    line: line.trim().to_string(),
                });
            }
            return Ok(Vec::new());
        }
        libs.extend(library_of(line));
    }
    Ok(libs)
}

/// The path in one line of `ldd`'s output: `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6
/// (0x…)` or `/lib64/ld-linux-x86-64.so.2 (0x…)`; none for `linux-vdso.so.1 (0x…)`.
fn library_of(line: &str) -> Option<PathBuf> {
    let line = line.trim();
    let path = match line.split_once("=>") {
        Some((_, right)) => right.trim(),
        None => line,
    };
    let path = path.split(" (").next()?.trim();
    path.starts_with('/').then(|| PathBuf::from(path))
}

/// The assembled build context.
#[derive(Debug)]
pub struct Context {
    /// The tar the engine builds from.
    pub tar: Vec<u8>,
    /// Bytes of every file the image holds (runtime, libraries, standard library, server).
    pub payload_bytes: u64,
}

/// `FROM scratch`, every collected file at its path, an empty `/tmp`, `/app` as working
/// directory, and the executable with the manifest's arguments as entrypoint.
pub fn context(spec: &RuntimeSpec, probe: &Probe, files: &Files) -> Result<Context, RuntimeError> {
    let mut entrypoint = vec![probe.executable.to_string_lossy().into_owned()];
    entrypoint.extend(spec.args.iter().cloned());
    let mut dockerfile = String::from("FROM scratch\nCOPY root/ /\nCOPY tmp /tmp\nENV HOME=/tmp\n");
    for entry in &spec.env {
        if let Some((key, value)) = entry.split_once('=') {
            dockerfile.push_str(&format!("ENV {key}={}\n", serde_json::json!(value)));
        }
    }
    dockerfile.push_str(&format!(
        "WORKDIR {APP_DIR}\nENTRYPOINT {}\n",
        serde_json::json!(entrypoint)
    ));
    let mut tar = tar::Builder::new(Vec::new());
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| RuntimeError::Io { path, source }
    };
    let header = |size: u64, mode: u32, kind: tar::EntryType| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_mtime(0);
        h
    };
    let mut append = |h: &mut tar::Header, path: &str, data: &[u8]| {
        h.set_cksum();
        tar.append_data(h, path, data)
    };
    let here = Path::new("Dockerfile");
    append(
        &mut header(dockerfile.len() as u64, 0o644, tar::EntryType::Regular),
        "Dockerfile",
        dockerfile.as_bytes(),
    )
    .map_err(io(here))?;
    append(
        &mut header(0, 0o1777, tar::EntryType::Directory),
        "tmp/",
        &[],
    )
    .map_err(io(here))?;
    let mut payload_bytes = 0;
    for (at, host) in files {
        let data = fs::read(host).map_err(io(host))?;
        let meta = fs::metadata(host).map_err(io(host))?;
        let executable = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
        payload_bytes += data.len() as u64;
        let name = format!("root{}", at.display());
        let mut h = header(
            data.len() as u64,
            if executable { 0o755 } else { 0o644 },
            tar::EntryType::Regular,
        );
        // The host's modification time: Python checks its cached bytecode against the
        // source's, and a read-only root could not hold a recompiled copy.
        h.set_mtime(modified_secs(&meta));
        append(&mut h, &name, &data).map_err(io(host))?;
    }
    let tar = tar.into_inner().map_err(io(here))?;
    Ok(Context { tar, payload_bytes })
}

fn modified_secs(meta: &fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

/// What decides whether an image is still current besides the server's sources: the probe's
/// answer and the size and modification time of every host file the image takes.
pub fn fingerprint(probe: &Probe, files: &Files) -> String {
    let mut hasher = Sha256::new();
    hasher.update(probe.executable.to_string_lossy().as_bytes());
    for (at, host) in files {
        hasher.update(at.to_string_lossy().as_bytes());
        if let Ok(meta) = fs::metadata(host) {
            hasher.update(meta.len().to_le_bytes());
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            hasher.update(mtime.map_or(0, |d| d.as_nanos()).to_le_bytes());
        }
    }
    hex::encode(&hasher.finalize()[..6])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(probe: &[&str]) -> RuntimeSpec {
        RuntimeSpec {
            name: "sh".into(),
            probe: probe.iter().map(|s| s.to_string()).collect(),
            skip: vec!["skipped".into(), "cache-*".into()],
            files: vec!["server.sh".into(), "lib".into()],
            args: vec!["/app/server.sh".into()],
            env: vec!["A=b c".into()],
        }
    }

    #[test]
    fn ldd_lines_give_the_library_paths_and_the_loader_but_not_the_vdso() {
        let lines = [
            "\tlinux-vdso.so.1 (0x00007ffd)",
            "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f81)",
            "\t/lib64/ld-linux-x86-64.so.2 (0x00007f81)",
        ];
        let found: Vec<Option<PathBuf>> = lines.iter().map(|l| library_of(l)).collect();
        assert_eq!(
            found,
            [
                None,
                Some(PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6")),
                Some(PathBuf::from("/lib64/ld-linux-x86-64.so.2"))
            ]
        );
    }

    #[tokio::test]
    async fn a_runtime_the_host_lacks_is_a_set_up_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = probe(
            "extra/x",
            dir.path(),
            &spec(&["wscbench-no-such-runtime", "-v"]),
        )
        .await
        .unwrap_err();
        assert_eq!(err.class(), crate::ErrorClass::Setup);
        let text = err.to_string();
        assert!(
            text.contains("extra/x runs on sh, which is not installed here"),
            "{text}"
        );
        assert!(text.contains("wscbench-no-such-runtime -v"), "{text}");
    }

    #[tokio::test]
    async fn the_image_holds_the_runtime_its_libraries_the_tree_less_skips_and_the_app() {
        let dir = tempfile::tempdir().unwrap();
        let stdlib = dir.path().join("stdlib");
        fs::create_dir_all(stdlib.join("skipped")).unwrap();
        fs::create_dir_all(stdlib.join("cache-1")).unwrap();
        fs::write(stdlib.join("os.txt"), "kept").unwrap();
        fs::write(stdlib.join("skipped/x"), "left out").unwrap();
        fs::write(stdlib.join("cache-1/x"), "left out").unwrap();
        fs::create_dir_all(dir.path().join("lib")).unwrap();
        fs::write(dir.path().join("lib/chat.sh"), "echo").unwrap();
        fs::write(dir.path().join("server.sh"), "exec true").unwrap();
        let script = format!("command -v sh; echo {}", stdlib.display());
        let spec = spec(&["sh", "-c", &script]);
        let found = probe("extra/sh", dir.path(), &spec).await.unwrap();
        let files = collect(dir.path(), &spec, &found).unwrap();
        let paths: Vec<String> = files.keys().map(|p| p.display().to_string()).collect();
        assert!(
            paths.contains(&found.executable.display().to_string()),
            "{paths:?}"
        );
        assert!(paths.iter().any(|p| p.contains("libc.so")), "{paths:?}");
        assert!(paths.iter().any(|p| p.contains("ld-linux")), "{paths:?}");
        assert!(
            paths.contains(&format!("{}/os.txt", stdlib.display())),
            "{paths:?}"
        );
        assert!(
            !paths
                .iter()
                .any(|p| p.contains("skipped") || p.contains("cache-1")),
            "{paths:?}"
        );
        assert!(paths.contains(&"/app/server.sh".to_string()), "{paths:?}");
        assert!(paths.contains(&"/app/lib/chat.sh".to_string()), "{paths:?}");

        let built = context(&spec, &found, &files).unwrap();
        let mut archive = tar::Archive::new(built.tar.as_slice());
        let mut dockerfile = String::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            if entry.path().unwrap() == Path::new("Dockerfile") {
                entry.read_to_string(&mut dockerfile).unwrap();
            }
        }
        assert!(dockerfile.starts_with("FROM scratch\n"), "{dockerfile}");
        assert!(dockerfile.contains("ENV A=\"b c\"\n"), "{dockerfile}");
        let entry = format!(
            "ENTRYPOINT [\"{}\",\"/app/server.sh\"]",
            found.executable.display()
        );
        assert!(dockerfile.contains(&entry), "{dockerfile}");
        assert!(built.payload_bytes > 0);
    }
}
