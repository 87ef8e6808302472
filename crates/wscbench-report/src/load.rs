//! Finding and reading result files: walks a results directory, parses every
//! `*.json` with [`RunResult::from_json`], skips what is not a readable result with a
//! warning, and keeps the latest run of each point (all its repetitions). [`select`] then
//! picks like with like: one mode, one load path, one set of limits per report.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use wscbench_results::conformance::CONFORMANCE_DIR;
use wscbench_results::{LoadPath, Mode, ReadError, RunResult, ServerConformance};

/// Results directories are `results/<run-id>/profile-x/<language>/<scenario>.json`;
/// anything much deeper is not ours (or a symlink loop).
const MAX_DEPTH: usize = 8;

/// The results a report is made from, and what was skipped on the way.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Every repetition of the latest run of each point (per mode and conditions), ordered
    /// by point.
    pub results: Vec<RunResult>,
    /// One line per skipped file or directory, naming its path and the reason.
    pub warnings: Vec<String>,
    /// Files skipped because a newer wscbench wrote them (a subset of the warnings).
    pub newer_schema: Vec<PathBuf>,
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
    load(dir, run, true)
}

/// Loads every readable result under `dir`, of every run, superseded or not: what a
/// history needs.
pub fn load_every_run(dir: &Path) -> Result<Loaded, LoadError> {
    load(dir, None, false)
}

fn load(dir: &Path, run: Option<&str>, latest_only: bool) -> Result<Loaded, LoadError> {
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
    let mut newer_schema = Vec::new();
    for path in files {
        match read_result(&path) {
            Ok(result) => results.push(result),
            Err((reason, too_new)) => {
                if too_new {
                    newer_schema.push(path.clone());
                }
                warnings.push(format!("skipped {}: {reason}", path.display()))
            }
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

    let (results, superseded) = if latest_only {
        latest_of_each(results)
    } else {
        (results, 0)
    };
    Ok(Loaded {
        results,
        warnings,
        newer_schema,
        superseded,
    })
}

/// What runs recorded beside their results, for the tables that are not made of results:
/// the transports not offered (the transport matrix) and each row's RFC 6455 conformance.
#[derive(Debug, Clone, Default)]
pub struct RunRecords {
    /// The transports the runs' servers do not offer, with the reasons (`run.json`).
    pub not_offered: Vec<wscbench_results::NotOffered>,
    /// Each row's conformance over each transport (`conformance/<row>/<transport>.json`),
    /// ordered by row and transport.
    pub conformance: Vec<ServerConformance>,
    /// One line per record file that could not be read, naming it and the reason.
    pub warnings: Vec<String>,
}

/// The records of each of `run_ids` under `dir`, a results directory or one run's own
/// (runs without them, or of an older wscbench, recorded none).
pub fn records(dir: &Path, run_ids: &[&str]) -> RunRecords {
    let mut records = RunRecords::default();
    for id in run_ids {
        let run_dir = match dir.file_name() {
            Some(name) if name == *id && !dir.join(id).is_dir() => dir.to_path_buf(),
            _ => dir.join(id),
        };
        let manifest = std::fs::read_to_string(run_dir.join(wscbench_results::RUN_MANIFEST_FILE))
            .ok()
            .and_then(|text| wscbench_results::RunManifest::from_json(&text).ok());
        records
            .not_offered
            .extend(manifest.into_iter().flat_map(|m| m.not_offered));
        let (found, warnings) = conformance_in(&run_dir);
        records.conformance.extend(found);
        records.warnings.extend(warnings);
    }
    records
        .conformance
        .sort_by(|a, b| (&a.server, a.transport).cmp(&(&b.server, b.transport)));
    records
}

/// Every conformance file of one run directory, and a warning for each unreadable one.
fn conformance_in(run_dir: &Path) -> (Vec<ServerConformance>, Vec<String>) {
    let dir = run_dir.join(CONFORMANCE_DIR);
    let (mut files, mut warnings) = (Vec::new(), Vec::new());
    if let Ok(entries) = fs::read_dir(&dir) {
        walk(entries, &dir, 0, &mut files, &mut warnings);
    }
    let mut found = Vec::new();
    for path in files {
        match fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| ServerConformance::from_json(&text))
        {
            Ok(conformance) => found.push(conformance),
            Err(e) => warnings.push(format!("skipped {}: {e}", path.display())),
        }
    }
    (found, warnings)
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
                "{results} from runs {} to {}, the latest run of each point",
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

/// What makes results comparable besides their point: mode, load path, the server's
/// limits, and whether wscbench started the server (an external one, `run --url`, ran under
/// none of its limits on a machine of its own choosing). Results that differ here never
/// share a table.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
struct Cohort {
    external: bool,
    mode: Mode,
    load_path: LoadPath,
    server_cpus: f64,
    server_memory_bytes: u64,
    cpuset_server: Option<String>,
}

impl Cohort {
    fn of(r: &RunResult) -> Cohort {
        Cohort {
            external: r.external_url.is_some(),
            mode: r.mode,
            load_path: r.load_path,
            server_cpus: r.conditions.server_cpus,
            server_memory_bytes: r.conditions.server_memory_bytes,
            cpuset_server: r.conditions.cpuset_server.clone(),
        }
    }

    /// How `self` differs from the chosen cohort, in a few words.
    fn difference(&self, chosen: &Cohort) -> String {
        if self.external != chosen.external {
            if self.external {
                "external servers (run --url; see them with --run)".into()
            } else {
                "managed servers".into()
            }
        } else if self.mode != chosen.mode {
            format!("mode {}", self.mode)
        } else if self.load_path != chosen.load_path {
            format!("load path {}", self.load_path)
        } else {
            let cpuset = self.cpuset_server.as_deref().unwrap_or("none");
            format!(
                "limits {} CPUs, {}, cpuset {cpuset}",
                self.server_cpus,
                crate::units::size(self.server_memory_bytes)
            )
        }
    }
}

/// Keeps every repetition of the latest run of each point and cohort, ordered by point,
/// and counts the results of earlier runs it dropped. Works on owned results and on
/// references. Repetitions of one run are grouped, never superseded.
pub(crate) fn latest_of_each<R: Borrow<RunResult>>(results: Vec<R>) -> (Vec<R>, usize) {
    let total = results.len();
    type Key = (wscbench_results::PointKey, String);
    // The latest run of each point, by its latest start (RFC 3339 UTC timestamps of one
    // writer order correctly as text), then run id.
    let mut latest: Vec<(Key, Cohort, (String, String))> = Vec::new();
    for result in &results {
        let r = result.borrow();
        let key: Key = (r.point(), format!("{:?}", Cohort::of(r)));
        let when = (r.started_at.clone(), r.run_id.clone());
        match latest.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, kept)) if *kept < when => *kept = when,
            Some(_) => {}
            None => latest.push((key, Cohort::of(r), when)),
        }
    }
    let run_of: BTreeMap<Key, String> = latest
        .into_iter()
        .map(|(k, _, (_, run))| (k, run))
        .collect();
    let mut kept: Vec<R> = results
        .into_iter()
        .filter(|result| {
            let r = result.borrow();
            run_of.get(&(r.point(), format!("{:?}", Cohort::of(r)))) == Some(&r.run_id)
        })
        .collect();
    kept.sort_by(|a, b| {
        let (a, b) = (a.borrow(), b.borrow());
        (a.point(), a.mode, a.load_path, a.repetition.index).cmp(&(
            b.point(),
            b.mode,
            b.load_path,
            b.repetition.index,
        ))
    });
    let superseded = total - kept.len();
    (kept, superseded)
}

/// Which results a report shows: by default those of the most recent run's mode and
/// conditions.
#[derive(Debug, Clone, Default)]
pub struct Choice {
    /// Only this mode (`--mode`).
    pub mode: Option<Mode>,
    /// The mode and conditions of this run (`--run`).
    pub run: Option<String>,
}

/// Results of one mode and one set of conditions, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The latest run of each point in the chosen cohort, all its repetitions.
    pub results: Vec<RunResult>,
    /// One line naming what was left out, e.g. `left out: 12 results of mode smoke, 6 of
    /// load path js; choose with --mode/--run`; `None` when nothing was.
    pub left_out: Option<String>,
}

/// Picks like with like: results of one mode, load path and set of server limits, those of
/// the most recent run that matches `choice`.
pub fn select(results: &[RunResult], choice: &Choice) -> Selection {
    let matches = |r: &&RunResult| {
        choice.mode.is_none_or(|m| r.mode == m)
            && choice.run.as_deref().is_none_or(|run| r.run_id == run)
    };
    let Some(reference) = results
        .iter()
        .filter(matches)
        .max_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)))
    else {
        return Selection {
            results: Vec::new(),
            left_out: (!results.is_empty()).then(|| {
                format!(
                    "left out: all {} results (none matches the chosen mode and run); choose with --mode/--run",
                    results.len()
                )
            }),
        };
    };
    let chosen = Cohort::of(reference);
    let mut left: Vec<(String, usize)> = Vec::new();
    let mut kept = Vec::new();
    for r in results {
        let cohort = Cohort::of(r);
        if cohort == chosen {
            kept.push(r);
        } else {
            let why = cohort.difference(&chosen);
            match left.iter_mut().find(|(w, _)| *w == why) {
                Some((_, n)) => *n += 1,
                None => left.push((why, 1)),
            }
        }
    }
    let (kept, _) = latest_of_each(kept);
    let left_out = (!left.is_empty()).then(|| {
        let parts: Vec<String> = left
            .iter()
            .enumerate()
            .map(|(i, (why, n))| {
                if i == 0 {
                    format!("{n} result{} of {why}", if *n == 1 { "" } else { "s" })
                } else {
                    format!("{n} of {why}")
                }
            })
            .collect();
        format!("left out: {}; choose with --mode/--run", parts.join(", "))
    });
    Selection {
        results: kept.into_iter().cloned().collect(),
        left_out,
    }
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
        // Nor is its conformance record (read by [`records`]).
        if name == RUN_METADATA || name == RAW_DIR || name == CONFORMANCE_DIR {
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

/// Reads one file, or says in a few words why it is not a result we can use (and whether
/// a newer wscbench wrote it).
fn read_result(path: &Path) -> Result<RunResult, (String, bool)> {
    let text = fs::read_to_string(path).map_err(|e| (format!("cannot read it: {e}"), false))?;
    RunResult::from_json(&text).map_err(|error| match error {
        ReadError::TooNew { .. } => (error.to_string(), true),
        ReadError::Migration { .. } => (error.to_string(), false),
        ReadError::Malformed { ref source } => {
            match serde_json::from_str::<serde_json::Value>(&text) {
                Err(_) => (format!("not valid JSON: {source}"), false),
                Ok(value)
                    if value.get("schema_version").is_none() || value.get("server").is_none() =>
                {
                    (
                        "not a wscbench result (no `schema_version` and `server`)".to_string(),
                        false,
                    )
                }
                Ok(_) => (format!("malformed result: {source}"), false),
            }
        }
    })
}
