//! `wscbench compare A B`: two runs point by point, with a verdict per headline metric.
//! Its command line is checked once into a [`CompareRequest`]: every refusal is raised there.

use std::path::{Path, PathBuf};

use clap::Args;
use wscbench_report::{Comparison, Format, Loaded, compare, load_results};

use crate::args::parse_format;
use crate::commands::report::resolve;
use crate::errors::{Doing, ExpectedError, UsageError};
use crate::exit::ExitCode;

/// `wscbench compare`'s command line.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a run id (looked up in --results) or a run's folder
    #[arg(value_name = "A")]
    pub a: String,
    /// The candidate: a run id or a run's folder; may measure a subset of A's points
    #[arg(value_name = "B")]
    pub b: String,
    /// Where run ids are looked up
    #[arg(long, default_value = "results", value_name = "DIR")]
    pub results: PathBuf,
    /// Significance level of Welch's t-test
    #[arg(long, default_value_t = 0.05, value_parser = parse_level)]
    pub level: f64,
    /// terminal, markdown or json
    #[arg(long, default_value = "terminal", value_parser = parse_format)]
    pub format: wscbench_report::Format,
    /// Exit 1 when a headline metric got significantly worse by more than PCT %
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
}

fn parse_level(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(level) if level > 0.0 && level < 1.0 => Ok(level),
        _ => Err(format!(
            "{s:?} is not a significance level between 0 and 1, such as 0.05"
        )),
    }
}

/// A run's results: `name` is a run folder, or a run id inside `results`. Runs that are not
/// there or are too new are the caller's input: usage.
fn load_run(root: &Path, results: &Path, name: &str) -> Result<Loaded, UsageError> {
    let folder = Path::new(name);
    let loaded = if folder.is_dir() {
        load_results(folder, None)
    } else {
        load_results(&resolve(root, results), Some(name))
    }
    .doing(|| format!("reading run {name}"))
    .map_err(|err| UsageError::new(err.one_line()))?;
    if let Some(path) = loaded.newer_schema.first() {
        return Err(UsageError::new(format!(
            "run {name}: {} was written by a newer wscbench (schema newer than {}); update wscbench to compare it",
            path.display(),
            wscbench_results::SCHEMA_VERSION
        )));
    }
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(loaded)
}

/// What `compare` will print, as its command line asks and as checked: the two runs, loaded
/// and compared.
struct CompareRequest {
    comparison: Comparison,
    /// terminal, markdown or json (`--format`).
    format: Format,
    /// Fail on a headline metric worse by more than this many percent (`--fail-on-regression`).
    fail_on_regression: Option<f64>,
}

impl CompareRequest {
    /// Loads and compares the runs `args` names: a run that is not there, is too new, or
    /// shares no point with the other is the caller's input, a usage error.
    fn check(root: &Path, args: &CompareArgs) -> Result<CompareRequest, UsageError> {
        let a = load_run(root, &args.results, &args.a)?;
        let b = load_run(root, &args.results, &args.b)?;
        let comparison = compare(&args.a, &a.results, &args.b, &b.results, args.level)
            .map_err(|err| UsageError::new(format!("nothing to compare: {err}")))?;
        Ok(CompareRequest {
            comparison,
            format: args.format,
            fail_on_regression: args.fail_on_regression,
        })
    }
}

pub fn run(root: &Path, args: CompareArgs) -> Result<ExitCode, ExpectedError> {
    let CompareRequest {
        comparison,
        format,
        fail_on_regression,
    } = CompareRequest::check(root, &args)?;
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&comparison).expect("a comparison always serializes")
        ),
        format => print!("{}", format.render(&comparison.to_report())),
    }
    if let Some(percent) = fail_on_regression {
        let regressions = comparison.regressions(percent);
        if !regressions.is_empty() {
            for change in &regressions {
                eprintln!(
                    "regression: {} {} {:+.1}% (p = {:.3})",
                    change.point,
                    change.metric_name,
                    change.change_percent.unwrap_or(0.0),
                    change.p_value.unwrap_or(1.0)
                );
            }
            eprintln!(
                "{} headline metric(s) got significantly worse by more than {percent}%",
                regressions.len()
            );
            return Ok(ExitCode::Failure);
        }
    }
    Ok(ExitCode::Ok)
}
