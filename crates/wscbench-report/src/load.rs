//! Finding and reading result files: walks a results directory, parses every
//! `*.json` with [`RunResult::from_json`], skips what is not a readable result with a
//! warning, and keeps one result per server × scenario.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use wscbench_results::{ReadError, RunResult};

/// Results directories are `results/<run-id>/profile-x/<language>/<scenario>.json`;
/// anything much deeper is not ours (or a symlink loop).
const MAX_DEPTH: usize = 8;

/// The results a report is made from, and what was skipped on the way.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// One result per server × scenario, ordered by server id then scenario.
    pub results: Vec<RunResult>,
    /// One line per skipped file or directory, naming its path and the reason.
    pub warnings: Vec<String>,
    /// Older results of a server × scenario that a later run replaced.
    pub superseded: usize,
}

/// Why no results could be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The directory does not exist or cannot be listed.
    #[error("cannot read results directory `{}`", dir.display())]
    Unreadable {
        /// The directory asked for.
        dir: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// The directory holds no readable result file.
    #[error(
        "no wscbench results in `{}`{}",
        dir.display(),
        match skipped.len() {
            0 => String::new(),
            1 => " (1 file skipped)".to_string(),
            n => format!(" ({n} files skipped)"),
        }
    )]
    NoResults {
        /// The directory searched.
        dir: PathBuf,
        /// Why each file that was found was skipped.
        skipped: Vec<String>,
    },
    /// Results exist, but none from the run asked for.
    #[error(
        "no results of run `{run}` in `{}` (runs found: {})",
        dir.display(),
        if available.is_empty() { "none".to_string() } else { available.join(", ") }
    )]
    RunNotFound {
        /// The run id asked for.
        run: String,
        /// The directory searched.
        dir: PathBuf,
        /// The run ids that are there, oldest first by name.
        available: Vec<String>,
    },
}

/// Loads the results under `dir`, either a whole `results/` directory or one run's
/// directory inside it.
///
/// Without `run`, keeps the latest result of each server × scenario (by `started_at`,
/// then run id), so a re-run of one server replaces only that server's numbers. With
/// `run`, keeps only that run's results and fails if it has none.
pub fn load_results(dir: &Path, run: Option<&str>) -> Result<Loaded, LoadError> {
    // Reading one run's directory, when it is there, spares parsing every other run
    // and keeps their warnings out of this report.
    let run_dir = run
        .map(|run| dir.join(run))
        .filter(|run_dir| run_dir.is_dir());
    let searched = run_dir.as_deref().unwrap_or(dir);

    let mut warnings = Vec::new();
    let mut files = Vec::new();
    let entries = fs::read_dir(searched).map_err(|source| LoadError::Unreadable {
        dir: searched.to_path_buf(),
        source,
    })?;
    walk(entries, searched, 0, &mut files, &mut warnings);

    let mut results = Vec::new();
    for path in files {
        match read_result(&path) {
            Ok(result) => results.push(result),
            Err(reason) => warnings.push(format!("skipped {}: {reason}", path.display())),
        }
    }
    if results.is_empty() {
        return Err(LoadError::NoResults {
            dir: searched.to_path_buf(),
            skipped: warnings,
        });
    }

    if let Some(run) = run {
        let available: BTreeSet<String> = results.iter().map(|r| r.run_id.clone()).collect();
        results.retain(|r| r.run_id == run);
        if results.is_empty() {
            return Err(LoadError::RunNotFound {
                run: run.to_string(),
                dir: searched.to_path_buf(),
                available: available.into_iter().collect(),
            });
        }
    }

    let (results, superseded) = latest_of_each(results);
    Ok(Loaded {
        results,
        warnings,
        superseded,
    })
}

impl Loaded {
    /// The distinct run ids the results come from, sorted.
    pub fn run_ids(&self) -> Vec<&str> {
        let ids: BTreeSet<&str> = self.results.iter().map(|r| r.run_id.as_str()).collect();
        ids.into_iter().collect()
    }

    /// One line for the CLI to print before a report, e.g.
    /// `24 results from run 20261121-143005 (2 files skipped)`.
    pub fn summary_line(&self) -> String {
        let results = match self.results.len() {
            1 => "1 result".to_string(),
            n => format!("{n} results"),
        };
        let runs = self.run_ids();
        let mut line = match runs.as_slice() {
            [run] => format!("{results} from run {run}"),
            _ => format!(
                "{results} from runs {} to {}, the latest of each server × scenario",
                runs[0],
                runs[runs.len() - 1]
            ),
        };
        let mut notes = Vec::new();
        if self.superseded > 0 {
            notes.push(format!("{} older superseded", self.superseded));
        }
        if !self.warnings.is_empty() {
            notes.push(format!("{} skipped", self.warnings.len()));
        }
        let modes: BTreeSet<&str> = self.results.iter().map(|r| r.mode.as_str()).collect();
        if modes.len() > 1 {
            let modes: Vec<&str> = modes.into_iter().collect();
            notes.push(format!("mixed modes: {}", modes.join(", ")));
        }
        if !notes.is_empty() {
            line.push_str(&format!(" ({})", notes.join("; ")));
        }
        line
    }
}

/// Keeps the latest result of each server × scenario, ordered by server id then
/// scenario, and counts the ones it dropped. Works on owned results and on references.
pub(crate) fn latest_of_each<R: Borrow<RunResult>>(results: Vec<R>) -> (Vec<R>, usize) {
    let total = results.len();
    let mut latest: BTreeMap<wscbench_results::PointKey, R> = BTreeMap::new();
    for result in results {
        let r = result.borrow();
        let key = r.point();
        let newer = latest.get(&key).is_none_or(|kept| {
            let kept = kept.borrow();
            // RFC 3339 UTC timestamps of one writer order correctly as text.
            (&r.started_at, &r.run_id) > (&kept.started_at, &kept.run_id)
        });
        if newer {
            latest.insert(key, result);
        }
    }
    let kept: Vec<R> = latest.into_values().collect();
    let superseded = total - kept.len();
    (kept, superseded)
}

/// The run's metadata file in `results/<run-id>/`, written by `wscbench run`.
pub const RUN_METADATA: &str = "run.json";
/// The directory of k6's raw summaries in `results/<run-id>/`.
pub const RAW_DIR: &str = "raw";

/// Collects every `*.json` file under a directory, in name order so that warnings
/// and ties come out the same on every machine.
fn walk(
    entries: fs::ReadDir,
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) {
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => paths.push(entry.path()),
            Err(e) => warnings.push(format!("skipped an entry of {}: {e}", dir.display())),
        }
    }
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        // A run directory also holds its metadata and k6's raw output: not results, not warnings.
        if name == RUN_METADATA || name == RAW_DIR {
            continue;
        }
        if path.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                warnings.push(format!(
                    "skipped {}: nested too deep for a results directory",
                    path.display()
                ));
                continue;
            }
            match fs::read_dir(&path) {
                Ok(entries) => walk(entries, &path, depth + 1, files, warnings),
                Err(e) => warnings.push(format!("skipped {}: {e}", path.display())),
            }
        } else if path.extension().is_some_and(|ext| ext == "json") {
            files.push(path);
        }
    }
}

/// Reads one file, or says in a few words why it is not a result we can use.
fn read_result(path: &Path) -> Result<RunResult, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    RunResult::from_json(&text).map_err(|error| match error {
        ReadError::TooNew { .. } | ReadError::Migration { .. } => error.to_string(),
        ReadError::Malformed { ref source } => {
            match serde_json::from_str::<serde_json::Value>(&text) {
                Err(_) => format!("not valid JSON: {source}"),
                Ok(value)
                    if value.get("schema_version").is_none() || value.get("server").is_none() =>
                {
                    "not a wscbench result (no `schema_version` and `server`)".to_string()
                }
                Ok(_) => format!("malformed result: {source}"),
            }
        }
    })
}
