//! Comparison tables from stored wscbench results: load the result files, pick like with
//! like ([`select`]), summarize repetitions ([`stats`]), build a format-neutral [`Report`]
//! (a scorecard per profile first, then the overall summary), and render it for a terminal,
//! as Markdown or as JSON.
//! [`compare()`] sets two runs side by side with a verdict per metric; [`history`] follows
//! one metric across runs. [`metrics`] is the one table of metrics and directions they share.
//! [`knobs`] adds, for a sweep or variants, one table per metric across the knob's values.
//!
//! A table is made of the primitives in [`table`], which know nothing of results; one
//! assembler (`report`) calls every table builder, and is the only module that does.
//!
//! This crate reads result files only. It never talks to Docker and never runs async
//! code, so a report can be made anywhere the `results/` directory is.
//!
//! ```no_run
//! use std::path::Path;
//! use wscbench_report::{load_results, select, Choice, Format, Report};
//!
//! let loaded = load_results(Path::new("results"), None)?;
//! for warning in &loaded.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! eprintln!("{}", loaded.summary_line());
//! let selection = select(&loaded.results, &Choice::default());
//! let mut report = Report::from_selected(&selection.results);
//! report.notes.extend(selection.left_out);
//! print!("{}", "markdown".parse::<Format>()?.render(&report));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod capacity;
mod certainty;
pub mod compare;
pub mod conformance;
mod curve;
mod curve_table;
mod decision;
pub mod history;
pub mod html;
mod idle_cost;
pub mod knobs;
pub mod load;
pub mod metrics;
pub mod precision;
pub mod render;
mod report;
pub mod rooms;
pub mod rounds;
mod rows;
mod scenarios;
mod scorecard;
mod sizes;
pub mod stats;
mod summary;
pub mod table;
pub mod transports;
mod units;
pub mod wording;

pub use compare::{Change, CompareError, Comparison, Verdict, compare};
pub use load::{
    Choice, LoadError, Loaded, RunRecords, Selection, load_every_run, load_results, records, select,
};
pub use metrics::{Better, Metric};
pub use render::{
    Format, Json, Markdown, Renderer, TERMINAL_COLUMNS, Terminal, UnknownFormat, Width,
};
pub use table::{Cell, Column, Report, Row, Scorecard, Table};
