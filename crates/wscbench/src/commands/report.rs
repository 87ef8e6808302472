//! `wscbench report`: the comparison tables from stored results alone.

use std::path::Path;

use anyhow::{Context, Result};
use wscbench_report::{Report, html, load_results};

use crate::cli::{ReportArgs, ReportFormat};

pub fn run(root: &Path, args: ReportArgs) -> Result<i32> {
    let dir = if args.dir.is_relative() && !args.dir.exists() {
        root.join(&args.dir)
    } else {
        args.dir.clone()
    };
    let loaded = load_results(&dir, args.run.as_deref())
        .with_context(|| format!("reading results from {}", dir.display()))?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    eprintln!("{}", loaded.summary_line());
    let report = Report::from_results(&loaded.results);
    let (text, output) = match args.format {
        ReportFormat::Text(format) => (format.render(&report), args.output),
        ReportFormat::Html => {
            let context = html::PageContext::for_results(&dir, &loaded.results);
            let page = html::render_page(&loaded.results, &report, &context);
            // A page is not for a terminal: it always goes to a file.
            (
                page,
                Some(args.output.unwrap_or_else(|| "report.html".into())),
            )
        }
    };
    match output {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(0)
}
