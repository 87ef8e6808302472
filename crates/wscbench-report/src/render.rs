//! Turning a [`Report`] into text: one [`Renderer`] per output [`Format`]. Renderers
//! only lay out what the report decided (marks, best values, footnotes).

use std::fmt::Write as _;
use std::str::FromStr;

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

use crate::table::{Report, Table};

/// Shown instead of tables when there are none.
const NOTHING: &str = "No results to compare.";

/// Renders a whole report as text.
pub trait Renderer {
    /// The report as this format's text, ending with a newline.
    fn render(&self, report: &Report) -> String;
}

/// The output formats, as chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Box-drawn tables for a terminal (`terminal` or `table`).
    Terminal,
    /// GitHub-flavoured Markdown tables with the best values in bold (`markdown` or `md`).
    Markdown,
    /// The report's tables as JSON (`json`).
    Json,
}

/// A format name that is not one of [`Format`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{given}`; valid formats: {}", Format::NAMES)]
pub struct UnknownFormat {
    /// The name given.
    pub given: String,
}

impl Format {
    /// The accepted names, for help texts and errors.
    pub const NAMES: &str = "terminal (or table), markdown (or md), json";

    /// The renderer for this format.
    pub fn renderer(self) -> &'static dyn Renderer {
        match self {
            Format::Terminal => &Terminal,
            Format::Markdown => &Markdown,
            Format::Json => &Json,
        }
    }

    /// Renders a report in this format.
    pub fn render(self, report: &Report) -> String {
        self.renderer().render(report)
    }
}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.to_ascii_lowercase().as_str() {
            "terminal" | "table" => Ok(Format::Terminal),
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            _ => Err(UnknownFormat {
                given: name.to_string(),
            }),
        }
    }
}

/// The text formats: the report's notes, then each table in turn, a blank line between.
fn tables_as_text(report: &Report, table_as_text: fn(&Table) -> String) -> String {
    let mut out = String::new();
    for note in &report.notes {
        let _ = writeln!(out, "{note}");
    }
    if !report.notes.is_empty() {
        out.push('\n');
    }
    if report.is_empty() {
        out.push_str(NOTHING);
        out.push('\n');
        return out;
    }
    let tables: Vec<String> = report.tables.iter().map(table_as_text).collect();
    out.push_str(&tables.join("\n"));
    out
}

/// Box-drawn tables, each under its title line with its footnotes below.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal;

impl Renderer for Terminal {
    fn render(&self, report: &Report) -> String {
        tables_as_text(report, terminal_table)
    }
}

fn terminal_table(table: &Table) -> String {
    let mut builder = Builder::new();
    builder.push_record(table.columns.iter().map(|column| column.name.clone()));
    for row in &table.rows {
        builder.push_record(row.cells.iter().map(|cell| cell.text.clone()));
    }
    let mut grid = builder.build();
    grid.with(Style::sharp());
    for (index, column) in table.columns.iter().enumerate() {
        if column.numeric {
            grid.modify(Columns::one(index), Alignment::right());
        }
    }
    let mut out = format!("{}\n{grid}\n", table.title);
    for note in &table.footnotes {
        let _ = writeln!(out, "  {note}");
    }
    out
}

/// GitHub tables under `###` headings, best values in bold, footnotes as a list.
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Renderer for Markdown {
    fn render(&self, report: &Report) -> String {
        tables_as_text(report, markdown_table)
    }
}

fn markdown_table(table: &Table) -> String {
    let mut out = format!("### {}\n\n", table.title);
    out.push_str(&markdown_row(
        table.columns.iter().map(|column| escape(&column.name)),
    ));
    out.push_str(&markdown_row(table.columns.iter().map(|column| {
        if column.numeric { "--:" } else { ":--" }.to_string()
    })));
    for row in &table.rows {
        out.push_str(&markdown_row(row.cells.iter().map(|cell| {
            if cell.best {
                format!("**{}**", escape(&cell.text))
            } else {
                escape(&cell.text)
            }
        })));
    }
    if !table.footnotes.is_empty() {
        out.push('\n');
        for note in &table.footnotes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

fn markdown_row(cells: impl Iterator<Item = String>) -> String {
    let cells: Vec<String> = cells.collect();
    format!("| {} |\n", cells.join(" | "))
}

/// A pipe would end the cell early.
fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The report's tables as pretty JSON: `{"notes": [..], "tables": [{title, columns, rows,
/// footnotes}]}`, each row a list of `{text, value, best}` cells, with `tied`, `n`,
/// `std_dev`, `cv`, `ci95` and `noisy` where repetitions give them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Renderer for Json {
    fn render(&self, report: &Report) -> String {
        let mut out = serde_json::to_string_pretty(report).expect("a report always serializes");
        out.push('\n');
        out
    }
}
