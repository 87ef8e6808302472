//! The HTML report: its structure from the committed reference run, a partial run that
//! shows notes instead of empty charts, the load curve's interval whiskers, and (ignored by
//! default; scripts/test runs it) the page opened by a real browser, headless chromium, which
//! must log no console message, load no file but the page and paint a page that is not
//! blank.

use std::path::{Path, PathBuf};
use std::process::Command;

use wscbench_report::html::{PageContext, render_page};
use wscbench_report::{Report, load_results};
use wscbench_results::{BoundReason, Outcome, Repetition, RunResult};

const REFERENCE_RUN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../results/20261122-005656");
const SCENARIOS: [&str; 4] = ["steady", "burst", "churn", "saturation"];
/// Throughput, deliveries/s, peak CPU, peak memory, latency p95 and p99.
const BAR_CHARTS_PER_SCENARIO: usize = 6;

fn reference() -> Vec<RunResult> {
    load_results(Path::new(REFERENCE_RUN), None)
        .unwrap()
        .results
}

fn page_of(results: &[RunResult]) -> String {
    let report = Report::from_results(results);
    let context = PageContext::for_results(Path::new(REFERENCE_RUN), results);
    render_page(results, &report, &context)
}

/// The part of the page that is one scenario's section.
fn section<'a>(page: &'a str, scenario: &str) -> &'a str {
    let start = page
        .find(&format!(
            "<section class=\"scenario\" id=\"scenario-{scenario}\">"
        ))
        .unwrap_or_else(|| panic!("no section for {scenario}"));
    let end = page[start..].find("</section>").unwrap() + start;
    &page[start..end]
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn the_reference_run_has_conditions_a_guide_and_every_promised_chart_per_scenario() {
    let results = reference();
    let page = page_of(&results);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    for id in ["conditions", "how-to-read"] {
        assert_eq!(count(&page, &format!("<section id=\"{id}\">")), 1, "{id}");
    }
    for fact in [
        "2 cores, kernel 6.18.44",
        "engine 20.10.24+dfsg1 (API 1.41)",
        "v1.8.1",
    ] {
        assert!(page.contains(fact), "conditions lack {fact}");
    }
    // The command comes from the run's run.json.
    assert!(page.contains("target/release/wscbench run --format markdown"));

    for scenario in SCENARIOS {
        let section = section(&page, scenario);
        let servers = results
            .iter()
            .filter(|r| r.scenario.as_str() == scenario)
            .count();
        assert_eq!(servers, 6);
        assert_eq!(
            count(section, "data-chart=\"bars\""),
            BAR_CHARTS_PER_SCENARIO,
            "{scenario}"
        );
        assert_eq!(count(section, "data-chart=\"latency\""), 1, "{scenario}");
        assert_eq!(
            count(section, "data-chart=\"series\""),
            servers,
            "{scenario}"
        );
        // Every promised chart is drawn: the reference run has no notes.
        assert_eq!(count(section, "class=\"note\""), 0, "{scenario}");
        assert_eq!(
            count(section, "<figure class=\"chart"),
            BAR_CHARTS_PER_SCENARIO + 1 + servers,
            "{scenario}"
        );
        // Charts first, then the tables drawn from the same results.
        let first_table = section.find("<table>").expect("tables in the section");
        assert!(
            section.rfind("<figure").unwrap() < first_table,
            "{scenario}"
        );
    }

    // Every table of the report is on the page, once.
    let report = Report::from_results(&results);
    for table in &report.tables {
        let caption = format!("<caption>{}</caption>", table.title.replace('&', "&amp;"));
        assert_eq!(count(&page, &caption), 1, "{}", table.title);
    }
}

#[test]
fn load_generator_bound_bars_are_marked_and_their_reasons_listed_once_per_kind() {
    let page = page_of(&reference());
    let steady = section(&page, "steady");
    let burst = section(&page, "burst");
    // Steady was not load-generator bound; burst was, for every server.
    assert!(!steady.contains("class=\"reasons\""));
    assert!(!steady.contains("† </text>") && !steady.contains(" †\n</text>"));
    let reasons_start = burst.find("class=\"reasons\"").expect("a reasons list");
    let reasons =
        &burst[reasons_start..burst[reasons_start..].find("</div>").unwrap() + reasons_start];
    // The reference run's reasons are schema 1 text: one kind, one line, six points.
    assert_eq!(count(reasons, "<li>"), 1, "{reasons}");
    assert_eq!(count(reasons, "Profile"), 6, "{reasons}");
    // Throughput, deliveries and both latencies carry the mark on all six bars; peak CPU
    // and memory measure the server even so, and carry none.
    let marks: Vec<usize> = burst
        .split("data-chart=\"bars\"")
        .skip(1)
        .map(|chart| count(&chart[..chart.find("</figure>").unwrap()], " †\n</text>"))
        .collect();
    assert_eq!(marks, [6, 6, 0, 0, 6, 6], "bound bar labels per bar chart");
}

#[test]
fn reasons_recorded_as_data_are_listed_once_per_kind_with_every_point_they_apply_to() {
    let mut results = reference();
    for result in results
        .iter_mut()
        .filter(|r| r.scenario.as_str() == "burst")
    {
        result.loadgen_bound_reasons = vec![
            BoundReason::ReceivedShort {
                received: 10,
                delivered: 100,
            },
            BoundReason::MachineSaturated {
                busy_s: 20,
                measured_s: 22,
                cores: 2,
                loadgen_share_ratio: 0.6,
            },
        ];
    }
    let page = page_of(&results);
    let burst = section(&page, "burst");
    let start = burst.find("class=\"reasons\"").unwrap();
    let reasons = &burst[start..burst[start..].find("</div>").unwrap() + start];
    assert_eq!(count(reasons, "<li>"), 2, "{reasons}");
    assert_eq!(count(reasons, "Profile"), 12, "{reasons}");
    assert!(reasons.contains("k6 received fewer chats than the server wrote"));
}

#[test]
fn repetitions_fold_into_one_bar_per_point_and_a_native_curve_is_drawn() {
    let mut results: Vec<RunResult> = Vec::new();
    for result in reference()
        .into_iter()
        .filter(|r| r.scenario.as_str() == "steady")
    {
        for index in 1..=3 {
            let mut repeated = result.clone();
            repeated.repetition = Repetition { index, of: 3 };
            repeated.derived.throughput_msgs_per_s += index as f64;
            if let Some(k6) = &mut repeated.k6 {
                k6.latency.p999_ms = Some(k6.latency.p99_ms * 1.5);
                k6.latency.curve = (0..=40)
                    .map(|i| {
                        let p = 100.0 * (1.0 - 0.8_f64.powi(i));
                        [p, 1.0 + p / 10.0]
                    })
                    .collect();
            }
            results.push(repeated);
        }
    }
    let page = page_of(&results);
    let steady = section(&page, "steady");
    assert_eq!(count(steady, "data-chart=\"series\""), 6, "one per point");
    assert_eq!(count(steady, "(repetition 1 of 3)"), 6);
    assert_eq!(count(steady, "data-chart=\"latency\""), 1);
    // Throughput 96.2 + 1, + 2, + 3: each bar shows the mean, 98.2, not one repetition.
    let throughput = &steady[steady.find("data-chart=\"bars\"").unwrap()..];
    let throughput = &throughput[..throughput.find("</figure>").unwrap()];
    assert!(throughput.contains(">\n98.2\n</text>"), "{throughput}");
}

#[test]
fn the_page_references_nothing_outside_itself() {
    let page = page_of(&reference());
    // plotters writes the SVG namespace URL on each chart's root element. It is an
    // identifier, never fetched, and inline in HTML it is implied, so the page drops it.
    // After that, no URL of any kind may remain.
    assert!(!page.contains(wscbench_report::html::SVG_XMLNS.trim()));
    for reference in [
        "http://",
        "https://",
        "//",
        "<script",
        "<link",
        "<img",
        "src=",
        "url(",
        "@import",
        "@font-face",
    ] {
        assert!(!page.contains(reference), "the page contains {reference:?}");
    }
    assert_eq!(count(&page, "<svg "), 4 * (BAR_CHARTS_PER_SCENARIO + 1 + 6));
}

#[test]
fn a_partial_run_shows_notes_where_a_chart_would_be_empty() {
    let all = reference();
    let mut results: Vec<RunResult> = all
        .iter()
        .filter(|r| {
            (r.scenario.as_str() == "steady" && r.server.id == "profile-b/go")
                || (r.scenario.as_str() == "churn" && r.server.id == "profile-a/rust")
                || (r.scenario.as_str() == "burst" && r.server.id == "profile-a/zig")
        })
        .cloned()
        .collect();
    assert_eq!(results.len(), 3);
    for result in &mut results {
        match result.scenario.as_str() {
            // A churn run whose k6 left no summary and whose samples were lost.
            "churn" => {
                result.k6 = None;
                result.series.clear();
            }
            // A burst run that crashed: nothing of it can be charted.
            "burst" => result.outcome = Outcome::ServerCrashed,
            _ => {}
        }
    }
    let page = page_of(&results);
    assert!(!page.contains("id=\"scenario-saturation\""));

    let steady = section(&page, "steady");
    assert_eq!(
        count(steady, "<figure class=\"chart"),
        BAR_CHARTS_PER_SCENARIO + 2
    );
    assert_eq!(count(steady, "class=\"note\""), 0);

    let churn = section(&page, "churn");
    assert_eq!(
        count(churn, "<p class=\"note\" data-chart=\"bars\">"),
        2,
        "p95 and p99"
    );
    assert_eq!(
        count(churn, "<figure class=\"chart\" data-chart=\"bars\""),
        0
    );
    assert_eq!(count(churn, "data-chart=\"bars\""), BAR_CHARTS_PER_SCENARIO);
    assert!(churn.contains("<p class=\"note\" data-chart=\"latency\">"));
    assert!(churn.contains("<p class=\"note\" data-chart=\"series\">"));
    assert!(churn.contains("fewer than two per-second samples"));

    let burst = section(&page, "burst");
    assert_eq!(count(burst, "<figure"), 0);
    assert!(burst.contains("No run of this scenario ended ok"));
    assert!(
        burst.contains("<table>"),
        "the tables still say how it ended"
    );
}

/// What chromium reported about a page it opened.
struct Browsed {
    /// Console messages and files loaded, from chromium's verbose log.
    log: String,
    /// Share of the screenshot's pixels that are not background, 0 to 1.
    ink_ratio: f64,
}

/// Opens `page` in headless chromium (WSCBENCH_CHROMIUM, else `chromium`), takes a
/// 1280 × 4000 screenshot and decodes it.
fn browse(page: &Path, screenshot: &Path) -> Browsed {
    let profile = tempfile::tempdir().unwrap();
    let chromium = std::env::var("WSCBENCH_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let output = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            // stderr at verbosity 1 carries every console message (`:CONSOLE`) and every
            // file the page loads (`FileURLLoader::Start`).
            "--enable-logging=stderr",
            "--v=1",
            "--window-size=1280,4000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {chromium} (scripts/setup installs it): {e}"));
    let log = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "chromium failed: {log}");
    Browsed {
        log,
        ink_ratio: ink_ratio(screenshot),
    }
}

/// The share of pixels darker than the page's pale backgrounds: text, bars, lines.
fn ink_ratio(png_path: &Path) -> f64 {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    let channels = match frame.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected screenshot colour type {other:?}"),
    };
    let pixels = &buffer[..frame.buffer_size()];
    let total = pixels.len() / channels;
    let ink = pixels
        .chunks(channels)
        .filter(|p| {
            let luma = 0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * p[2] as f64;
            luma < 200.0
        })
        .count();
    ink as f64 / total as f64
}

fn console_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// Files chromium loaded for the page, the page itself included.
fn loaded_files(log: &str) -> Vec<&str> {
    log.lines()
        .filter_map(|l| l.split("FileURLLoader::Start: ").nth(1))
        .collect()
}

#[test]
#[ignore = "needs chromium; scripts/test runs it"]
fn a_real_browser_shows_the_reference_page_without_console_errors_and_not_blank() {
    let dir = tempfile::tempdir().unwrap();
    let keep = std::env::var_os("WSCBENCH_SCREENSHOT").map(PathBuf::from);

    // First, that the checks can fail: a page that logs to the console, loads a missing
    // image, and one that is blank.
    let probe = dir.path().join("probe.html");
    std::fs::write(
        &probe,
        "<!DOCTYPE html><p>probe</p><img src=\"missing.png\">\
         <script>console.error('wscbench-probe')</script>",
    )
    .unwrap();
    let seen = browse(&probe, &dir.path().join("probe.png"));
    assert!(
        console_lines(&seen.log)
            .iter()
            .any(|l| l.contains("wscbench-probe")),
        "chromium's log no longer shows console messages; the check below would pass blindly"
    );
    assert!(
        loaded_files(&seen.log)
            .iter()
            .any(|f| f.ends_with("missing.png"))
    );
    let blank = dir.path().join("blank.html");
    std::fs::write(
        &blank,
        "<!DOCTYPE html><body style=\"background:#f4f4f2\"></body>",
    )
    .unwrap();
    let seen = browse(&blank, &dir.path().join("blank.png"));
    assert!(
        seen.ink_ratio < 0.001,
        "a blank page measured {}",
        seen.ink_ratio
    );

    // The page itself.
    let page = dir.path().join("report.html");
    std::fs::write(&page, page_of(&reference())).unwrap();
    let screenshot = keep.unwrap_or_else(|| dir.path().join("report.png"));
    let seen = browse(&page, &screenshot);
    eprintln!(
        "{:.1}% of the screenshot's pixels are ink ({})",
        seen.ink_ratio * 100.0,
        screenshot.display()
    );
    assert_eq!(
        console_lines(&seen.log),
        Vec::<&str>::new(),
        "console messages"
    );
    let page_url = format!("file://{}", page.display());
    assert_eq!(
        loaded_files(&seen.log),
        vec![page_url.as_str()],
        "files loaded"
    );
    assert!(
        seen.ink_ratio > 0.03,
        "the page looks blank: only {:.2}% of its pixels are not background",
        seen.ink_ratio * 100.0
    );
}

mod common;

/// The page of a run of the two room scenarios.
fn rooms_page() -> String {
    let results = common::rooms_run();
    let report = Report::from_selected(&results);
    render_page(&results, &report, &PageContext::default())
}

#[test]
fn fanout_and_slow_consumers_have_their_own_charts_and_tables_in_their_sections() {
    let page = rooms_page();
    let fanout = section(&page, "fanout");
    assert!(fanout.contains("<h2>Fan-out</h2>"));
    assert_eq!(count(fanout, "data-chart=\"wide\""), 1);
    assert!(fanout.contains("latency p99 against room size"));
    assert!(fanout.contains("room size (clients, log scale)"));
    assert!(
        fanout.contains("<caption>Profile B (minimal / stdlib) — Fan-out by room size</caption>")
    );
    // One line per server through its four room sizes, a dot on each.
    let start = fanout.find("data-chart=\"wide\"").unwrap();
    let chart = &fanout[start..start + fanout[start..].find("</figure>").unwrap()];
    assert_eq!(count(chart, "<circle"), 8);

    let slow = section(&page, "slow-consumers");
    assert!(slow.contains("<h2>Slow consumers</h2>"));
    assert_eq!(count(slow, "data-chart=\"wide\""), 1);
    assert!(slow.contains("shaded: slow phase"));
    assert!(slow.contains("<caption>Profile B (minimal / stdlib) — Slow consumers</caption>"));
    // Both tables sit in their scenario's section, not among the tables across scenarios.
    assert!(
        !page.contains("id=\"other-tables\"") || {
            let start = page.find("id=\"other-tables\"").unwrap();
            !page[start..].contains("Fan-out by room size")
                && !page[start..].contains("— Slow consumers")
        }
    );
}

#[test]
fn the_rooms_page_references_nothing_outside_itself() {
    let page = rooms_page();
    assert!(!page.contains(wscbench_report::html::SVG_XMLNS.trim()));
    for reference in [
        "http://", "https://", "<script", "<link", "<img", "src=", "url(", "@import",
    ] {
        assert!(!page.contains(reference), "the page contains {reference:?}");
    }
}

#[test]
#[ignore = "needs chromium; scripts/test runs it"]
fn a_real_browser_shows_the_rooms_page_without_console_errors_and_not_blank() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("rooms.html");
    std::fs::write(&page, rooms_page()).unwrap();
    let seen = browse(&page, &dir.path().join("rooms.png"));
    assert_eq!(
        console_lines(&seen.log),
        Vec::<&str>::new(),
        "console messages"
    );
    let page_url = format!("file://{}", page.display());
    assert_eq!(
        loaded_files(&seen.log),
        vec![page_url.as_str()],
        "files loaded"
    );
    assert!(
        seen.ink_ratio > 0.03,
        "blank: {:.2}%",
        seen.ink_ratio * 100.0
    );
}

/// The page of the current reference run, as `wscbench report results/<run> --format html`
/// makes it (its conformance records included).
fn answer_page() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/20261128-123613");
    let results = load_results(&dir, None).unwrap().results;
    let records = wscbench_report::records(&dir, &["20261128-123613"]);
    let report = Report::from_selected_with(&results, &records);
    render_page(&results, &report, &PageContext::for_results(&dir, &results))
}

#[test]
fn the_page_leads_with_the_scorecards_then_the_headline_charts_then_the_conditions() {
    let page = answer_page();
    let at = |needle: &str| {
        page.find(needle)
            .unwrap_or_else(|| panic!("the page lacks {needle}"))
    };
    let answer = at("<section id=\"answer\">");
    let headline = at("<section id=\"headline-charts\">");
    let conditions = at("<section id=\"conditions\">");
    let summary = at("<caption>Summary</caption>");
    assert!(answer < headline && headline < conditions && conditions < summary);
    // The first table is a scorecard, the next one the other profile's.
    let captions: Vec<&str> = page
        .split("<caption>")
        .skip(1)
        .map(|rest| &rest[..rest.find("</caption>").unwrap()])
        .collect();
    assert_eq!(
        captions[..2],
        [
            "Scorecard — Profile A (frameworks)",
            "Scorecard — Profile B (minimal / stdlib)"
        ]
    );
    // Each scorecard is followed by its sentences, inside its own box.
    assert_eq!(count(&page, "<ul class=\"sentences\">"), 2);
    // Best and tie carry a colour and say so in text.
    assert!(
        page.contains("<td class=\"num best\"><strong>12.2 ms ± 1.15 ms /s ★ best</strong></td>")
    );
    assert!(page.contains("class=\"num tie\">"));
    // The population's chart and the load curve's two lead, drawn once; the curve's
    // section links to them.
    let charts = &page[headline..conditions];
    assert_eq!(count(charts, "<figure class=\"chart"), 3, "{charts}");
    assert!(charts.contains("against offered load"));
    let curve = section(&page, "load-curve");
    assert!(curve.contains("<a href=\"#headline-charts\">"));
    assert!(!curve.contains("against offered load"));
}

#[test]
#[ignore = "needs chromium; scripts/test runs it"]
fn a_real_browser_shows_the_page_that_leads_with_the_scorecards_without_console_errors() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("answer.html");
    std::fs::write(&page, answer_page()).unwrap();
    let seen = browse(&page, &dir.path().join("answer.png"));
    assert_eq!(
        console_lines(&seen.log),
        Vec::<&str>::new(),
        "console messages"
    );
    let page_url = format!("file://{}", page.display());
    assert_eq!(
        loaded_files(&seen.log),
        vec![page_url.as_str()],
        "files loaded"
    );
    // The top 4,000 px: the scorecards, their sentences and the headline charts.
    assert!(
        seen.ink_ratio > 0.03,
        "only {:.2}% ink",
        seen.ink_ratio * 100.0
    );
}

/// The `(x, y)` pixel positions of the filled dots of `color` in an SVG.
fn dots(svg: &str, color: &str) -> Vec<(f64, f64)> {
    let fill = format!("r=\"3\" opacity=\"1\" fill=\"{color}\"");
    svg.lines()
        .filter(|l| l.starts_with("<circle") && l.contains(&fill))
        .map(|l| (attribute(l, "cx"), attribute(l, "cy")))
        .collect()
}

/// The vertical thin lines of `color` in an SVG, as `(x, top y, bottom y)` in pixels: the
/// whiskers (a curve's own line is 2 px wide; caps are horizontal).
fn whiskers(svg: &str, color: &str) -> Vec<(f64, f64, f64)> {
    let stroke = format!("stroke=\"{color}\" stroke-width=\"1\"");
    svg.lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
        .filter_map(|l| {
            let points = l.split("points=\"").nth(1)?.split('"').next()?;
            let xy: Vec<(f64, f64)> = points
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            match xy[..] {
                [(x0, y0), (x1, y1)] if x0 == x1 => Some((x0, y0.min(y1), y0.max(y1))),
                _ => None,
            }
        })
        .collect()
}

fn attribute(element: &str, name: &str) -> f64 {
    let start = element.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    element[start..].split('"').next().unwrap().parse().unwrap()
}

#[test]
fn a_curve_point_with_several_rounds_gets_a_whisker_spanning_its_interval_and_one_round_none() {
    // Zig at 50k in three rounds (p99 10, 12 and 14 ms), at 100k in one (20 ms).
    let mut results: Vec<RunResult> = [10.0, 12.0, 14.0]
        .into_iter()
        .zip(1..)
        .map(|(p99, round)| {
            common::curve_step("profile-b/zig", 50_000.0, (1.0, p99, 7e5), (round, 3))
        })
        .collect();
    results.push(common::curve_step(
        "profile-b/zig",
        100_000.0,
        (1.0, 20.0, 7e5),
        (1, 1),
    ));
    let page = page_of(&results);
    let headline = &page[page.find("<section id=\"headline-charts\">").unwrap()..];
    let title = "chat latency p99 against offered load";
    let figure = &headline[headline.find(title).unwrap()..];
    let chart = &figure[figure.find("<svg").unwrap()..figure.find("</svg>").unwrap()];

    let zig = "#E09B1A";
    let [(x50, y50), (x100, y100)] = dots(chart, zig)[..] else {
        panic!("two dots: {chart}")
    };
    // One whisker, at the step of three rounds (the only line: no other's to stand beside).
    let [(x, top, bottom)] = whiskers(chart, zig)[..] else {
        panic!("one whisker: {chart}")
    };
    assert_eq!(x, x50);
    assert_ne!(x, x100);
    // Its ends read on the y axis the two dots set (12 ms at y50, 20 ms at y100) are the
    // 95 % interval of 10, 12 and 14 ms.
    let ms_at = |y: f64| 12.0 + (y - y50) * (20.0 - 12.0) / (y100 - y50);
    let ms_per_px = (20.0 - 12.0) / (y50 - y100);
    let (low, high) = wscbench_report::stats::Summary::of(&[10.0, 12.0, 14.0])
        .unwrap()
        .ci95
        .unwrap();
    let near = |y: f64, ms: f64| (ms_at(y) - ms).abs() <= 1.5 * ms_per_px;
    assert!(near(bottom, low), "{low} ms at y {bottom}");
    assert!(near(top, high), "{high} ms at y {top}");
    assert!(headline.contains("whiskers: 95 % intervals"));
}
