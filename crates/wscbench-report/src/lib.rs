//! Comparison tables from stored wscbench results: load the result files, build a
//! format-neutral [`Report`], and render it for a terminal, as Markdown or as JSON.
//!
//! This crate reads result files only. It never talks to Docker and never runs async
//! code, so a report can be made anywhere the `results/` directory is.
//!
//! ```no_run
//! use std::path::Path;
//! use wscbench_report::{load_results, Format, Report};
//!
//! let loaded = load_results(Path::new("results"), None)?;
//! for warning in &loaded.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! eprintln!("{}", loaded.summary_line());
//! let report = Report::from_results(&loaded.results);
//! print!("{}", "markdown".parse::<Format>()?.render(&report));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod load;
pub mod render;
pub mod tables;
pub mod wording;
mod units;

pub use load::{LoadError, Loaded, load_results};
pub use render::{Format, Json, Markdown, Renderer, Terminal, UnknownFormat};
pub use tables::{Better, Cell, Column, Report, Row, Table};
