//! Turning a [`Report`] into text: one [`Renderer`] per output [`Format`]. Renderers
//! only lay out what the report decided (marks, best values, footnotes). The terminal
//! renderer alone has a [`Width`]: at [`Width::Fit`] (the default) every line it prints is at
//! most [`TERMINAL_COLUMNS`] wide; Markdown and JSON always keep every column.

use std::fmt::Write as _;
use std::str::FromStr;

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::peaker::Priority;
use tabled::settings::{Alignment, Style, Width as TableWidth};

use crate::table::{Report, Scorecard, Table};

/// The widest line the terminal renderer prints at [`Width::Fit`].
pub const TERMINAL_COLUMNS: usize = 120;

/// Text cells longer than this become numbered footnotes in a terminal at [`Width::Fit`]
/// (a row's name, in the first column, never does).
const NOTE_AFTER_CHARS: usize = 32;

/// How wide the terminal renderer may lay a table out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Width {
    /// Every line at most [`TERMINAL_COLUMNS`] wide: a table's headline columns only, long
    /// text cells as numbered footnotes under it, wrapped footnotes.
    #[default]
    Fit,
    /// Every column, each cell's text in place, however wide that makes a line (`--wide`).
    Wide,
}

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

    /// The renderer for this format (a terminal's at [`Width::Fit`]).
    pub fn renderer(self) -> &'static dyn Renderer {
        self.renderer_at(Width::Fit)
    }

    /// The renderer for this format, a terminal's at `width`; the other formats have no width.
    pub fn renderer_at(self, width: Width) -> &'static dyn Renderer {
        match (self, width) {
            (Format::Terminal, Width::Fit) => &Terminal { width: Width::Fit },
            (Format::Terminal, Width::Wide) => &Terminal { width: Width::Wide },
            (Format::Markdown, _) => &Markdown,
            (Format::Json, _) => &Json,
        }
    }

    /// Renders a report in this format (a terminal's at [`Width::Fit`]).
    pub fn render(self, report: &Report) -> String {
        self.renderer().render(report)
    }

    /// Renders a report in this format, a terminal's at `width`.
    pub fn render_at(self, report: &Report, width: Width) -> String {
        self.renderer_at(width).render(report)
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

/// Where a text format puts the scorecards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// Before the tables, as the report orders them (Markdown).
    First,
    /// After the tables: the last screen a terminal leaves, as hyperfine ends with its
    /// sentence.
    Last,
}

/// The text formats: the report's notes, then the scorecards and each table in turn (the
/// scorecards where `answer` puts them), a blank line between.
fn tables_as_text(
    report: &Report,
    answer: Answer,
    scorecard_as_text: impl Fn(&Scorecard) -> String,
    table_as_text: impl Fn(&Table) -> String,
) -> String {
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
    let tables = report.tables.iter().map(table_as_text);
    let scorecards = report.scorecards.iter().map(scorecard_as_text);
    let parts: Vec<String> = match answer {
        Answer::First => scorecards.chain(tables).collect(),
        Answer::Last => tables.chain(scorecards).collect(),
    };
    out.push_str(&parts.join("\n"));
    out
}

/// Box-drawn tables, each under its title line with its footnotes below.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal {
    /// Whether tables fit [`TERMINAL_COLUMNS`] or show every column.
    pub width: Width,
}

impl Renderer for Terminal {
    fn render(&self, report: &Report) -> String {
        match self.width {
            Width::Wide => tables_as_text(
                report,
                Answer::Last,
                |scorecard| terminal_scorecard(scorecard, Width::Wide),
                |table| terminal_table(table, Width::Wide),
            ),
            Width::Fit => {
                let mut report = report.clone();
                report.notes = report.notes.iter().map(|n| wrapped(n, "")).collect();
                // A table of detail columns only (the summary, which the scorecards stand
                // for) waits for --wide; the last table says so.
                let (shown, waiting): (Vec<Table>, Vec<Table>) = report
                    .tables
                    .into_iter()
                    .partition(|t| !t.columns.iter().all(|c| c.detail));
                report.tables = shown;
                if let (false, Some(last)) = (waiting.is_empty(), report.tables.last_mut()) {
                    let titles: Vec<&str> = waiting.iter().map(|t| t.title.as_str()).collect();
                    last.footnotes.push(format!(
                        "With --wide (or --format markdown): {} (each decision's margin and reasons).",
                        titles.join(", ")
                    ));
                }
                tables_as_text(
                    &report,
                    Answer::Last,
                    |scorecard| terminal_scorecard(scorecard, Width::Fit),
                    |table| terminal_table(&fitted(table), Width::Fit),
                )
            }
        }
    }
}

/// A scorecard in a terminal: its table and key, then its sentences, the last lines read.
fn terminal_scorecard(scorecard: &Scorecard, width: Width) -> String {
    let table = match width {
        Width::Fit => fitted(&scorecard.table),
        Width::Wide => scorecard.table.clone(),
    };
    let mut out = terminal_table(&table, width);
    out.push('\n');
    for sentence in &scorecard.sentences {
        let line = match width {
            Width::Fit => wrapped(sentence, "  "),
            Width::Wide => sentence.clone(),
        };
        let _ = writeln!(out, "  {line}");
    }
    out
}

fn terminal_table(table: &Table, width: Width) -> String {
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
    if width == Width::Fit {
        // Only where headline columns alone are still too wide: the widest wrap first.
        grid.with(
            TableWidth::wrap(TERMINAL_COLUMNS)
                .priority(Priority::max(true))
                .keep_words(true),
        );
    }
    let mut out = format!("{}\n{grid}\n", table.title);
    for note in &table.footnotes {
        let _ = writeln!(out, "  {note}");
    }
    out
}

/// The table as a terminal shows it at [`Width::Fit`]: its headline columns, each long text
/// cell replaced by `[n]` with the text as footnote n, the footnotes wrapped, and as a last
/// resort the widest columns wrapped, so that no line exceeds [`TERMINAL_COLUMNS`].
fn fitted(table: &Table) -> Table {
    let mut fit = table.clone();
    let detail: Vec<usize> = (0..fit.columns.len())
        .filter(|&i| fit.columns[i].detail)
        .collect();
    for &i in detail.iter().rev() {
        fit.columns.remove(i);
        for row in &mut fit.rows {
            if i < row.cells.len() {
                row.cells.remove(i);
            }
        }
    }
    let mut numbered: Vec<String> = Vec::new();
    for row in &mut fit.rows {
        for (index, cell) in row.cells.iter_mut().enumerate().skip(1) {
            let numeric = fit.columns.get(index).is_some_and(|c| c.numeric);
            if numeric || cell.text.chars().count() <= NOTE_AFTER_CHARS {
                continue;
            }
            let n = match numbered.iter().position(|t| *t == cell.text) {
                Some(at) => at + 1,
                None => {
                    numbered.push(cell.text.clone());
                    numbered.len()
                }
            };
            cell.text = format!("[{n}]");
        }
    }
    let mut footnotes: Vec<String> = numbered
        .iter()
        .enumerate()
        .map(|(i, text)| format!("[{}] {text}", i + 1))
        .collect();
    if detail.len() == 1 {
        footnotes.push("One more column with --wide.".to_string());
    } else if !detail.is_empty() {
        footnotes.push(format!("{} more columns with --wide.", detail.len()));
    }
    footnotes.extend(fit.footnotes.iter().cloned());
    // Each footnote is printed after two spaces; its lines after the first are indented.
    fit.footnotes = footnotes.iter().map(|n| wrapped(n, "  ")).collect();
    fit.title = wrapped(&fit.title, "");
    fit
}

/// `text` broken between words into lines of at most [`TERMINAL_COLUMNS`] columns, printed
/// after `lead`; the lines after the first indented by two more spaces.
fn wrapped(text: &str, lead: &str) -> String {
    let room = TERMINAL_COLUMNS - lead.chars().count() - 2;
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= room => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.join(&format!("\n{lead}  "))
}

/// GitHub tables under `###` headings, best values in bold, footnotes as a list.
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Renderer for Markdown {
    fn render(&self, report: &Report) -> String {
        tables_as_text(report, Answer::First, markdown_scorecard, markdown_table)
    }
}

/// A scorecard under its `###` heading: the table, its sentences as a list, then its key.
fn markdown_scorecard(scorecard: &Scorecard) -> String {
    let table = Table {
        footnotes: Vec::new(),
        ..scorecard.table.clone()
    };
    let mut out = markdown_table(&table);
    out.push('\n');
    for sentence in &scorecard.sentences {
        let _ = writeln!(out, "- {sentence}");
    }
    if !scorecard.table.footnotes.is_empty() {
        let _ = writeln!(out, "\n{}", scorecard.table.footnotes.join(" "));
    }
    out
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
