//! The page's charts, drawn by plotters' SVG backend. Each chart is a function from plain
//! data (bars, lines) to a drawing area, returning the SVG text to inline. Colours, fonts and
//! sizes are set once, at the top of this file; nothing here knows about results.
//!
//! Text is drawn as SVG `<text>` elements with a generic font family, laid out by the
//! browser: no font file is read, at build time or at run time.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use wscbench_results::Language;

/// The font family of every label: the browser picks its own sans-serif face.
const FONT: &str = "sans-serif";
const CAPTION_PX: u32 = 15;
const LABEL_PX: u32 = 12;
const VALUE_PX: u32 = 11;
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);
/// A load-generator bound bar is filled at this opacity (and outlined at full colour).
const BOUND_FILL: f64 = 0.28;

/// Size of one bar chart, in pixels.
pub(crate) const BAR_SIZE: (u32, u32) = (380, 250);
/// Size of one panel of a per-second figure, in pixels.
pub(crate) const PANEL_SIZE: (u32, u32) = (380, 118);
/// Size of a latency chart, in pixels.
pub(crate) const LATENCY_SIZE: (u32, u32) = (780, 330);

/// Marks a figure that measures the load generator: the tables' mark.
pub(crate) use crate::table::LOADGEN_BOUND_MARK as BOUND_MARK;

/// A colour per language, so that a server looks the same in every chart; a language
/// without one of its own takes the `index`th of the others.
pub(crate) fn language_color(language: &str, index: usize) -> RGBColor {
    const OTHERS: [RGBColor; 4] = [
        RGBColor(0x6a, 0x4c, 0x93),
        RGBColor(0x2a, 0x9d, 0x8f),
        RGBColor(0x8a, 0x8a, 0x8a),
        RGBColor(0xc0, 0x39, 0x2b),
    ];
    match language.parse() {
        Ok(Language::Go) => RGBColor(0x00, 0x7d, 0x9c),
        Ok(Language::Rust) => RGBColor(0xb7, 0x41, 0x0e),
        Ok(Language::Zig) => RGBColor(0xe0, 0x9b, 0x1a),
        _ => OTHERS[index % OTHERS.len()],
    }
}

/// `#rrggbb`, for the page's legends.
pub(crate) fn css(color: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", color.0, color.1, color.2)
}

fn font(px: u32) -> TextStyle<'static> {
    (FONT, px).into_font().color(&INK)
}

/// One bar: a point's mean, its 95 % interval when it was repeated, and whether it
/// measures the load generator.
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    pub color: RGBColor,
    pub mean: f64,
    pub interval: Option<(f64, f64)>,
    pub bound: bool,
}

/// Bars side by side under one label on the x axis.
#[derive(Debug, Clone)]
pub(crate) struct BarGroup {
    pub name: String,
    pub bars: Vec<Bar>,
}

/// Grouped bars on a shared axis starting at zero, each with its value written above it
/// (and the bound mark when it has one), whiskers for intervals.
pub(crate) fn bar_chart(
    title: &str,
    unit: &str,
    groups: &[BarGroup],
    value_text: fn(f64) -> String,
) -> String {
    svg(BAR_SIZE, |root| {
        draw_bars(root, title, unit, groups, value_text)
    })
}

fn draw_bars(
    root: &DrawingArea<SVGBackend, Shift>,
    title: &str,
    unit: &str,
    groups: &[BarGroup],
    value_text: fn(f64) -> String,
) -> Result<(), Box<dyn std::error::Error>> {
    let top = groups
        .iter()
        .flat_map(|g| &g.bars)
        .map(|b| b.interval.map_or(b.mean, |(_, hi)| hi.max(b.mean)))
        .fold(0.0_f64, f64::max);
    let top = if top > 0.0 { top * 1.18 } else { 1.0 };
    let names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(title, font(CAPTION_PX))
        .margin(8)
        .x_label_area_size(24)
        .y_label_area_size(52)
        .build_cartesian_2d(-0.5..(groups.len() as f64 - 0.5), 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.08))
        .x_labels(groups.len() + 1)
        .x_label_formatter(&|x| label_at(&names, *x))
        .y_desc(unit)
        .y_label_formatter(&|y| short_number(*y))
        .label_style(font(LABEL_PX))
        .axis_desc_style(font(LABEL_PX))
        .draw()?;

    // Bars fill 80 % of their group's slot.
    for (g, group) in groups.iter().enumerate() {
        let width = 0.8 / group.bars.len().max(1) as f64;
        for (i, bar) in group.bars.iter().enumerate() {
            let left = g as f64 - 0.4 + i as f64 * width + width * 0.08;
            let right = left + width * 0.84;
            let middle = (left + right) / 2.0;
            let fill = if bar.bound {
                bar.color.mix(BOUND_FILL).filled()
            } else {
                bar.color.filled()
            };
            chart.draw_series([Rectangle::new([(left, 0.0), (right, bar.mean)], fill)])?;
            if bar.bound {
                chart.draw_series([Rectangle::new(
                    [(left, 0.0), (right, bar.mean)],
                    bar.color.stroke_width(1),
                )])?;
            }
            let mut label_at = bar.mean;
            if let Some((lo, hi)) = bar.interval {
                let cap = width * 0.2;
                let whisker = INK.stroke_width(1);
                chart.draw_series([
                    PathElement::new(vec![(middle, lo), (middle, hi)], whisker),
                    PathElement::new(vec![(middle - cap, lo), (middle + cap, lo)], whisker),
                    PathElement::new(vec![(middle - cap, hi), (middle + cap, hi)], whisker),
                ])?;
                label_at = label_at.max(hi);
            }
            let mut text = value_text(bar.mean);
            if bar.bound {
                text.push_str(&format!(" {BOUND_MARK}"));
            }
            chart.draw_series([Text::new(
                text,
                (middle, label_at),
                font(VALUE_PX).pos(Pos::new(HPos::Center, VPos::Bottom)),
            )])?;
        }
    }
    Ok(())
}

/// One line of a line chart.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub label: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (thin in a per-second panel), to set it apart: another profile's line
    /// of the same colour, or the load generator's.
    pub dashed: bool,
    /// The 95 % interval over the rounds at each point that has one, drawn by the charts
    /// that put a dot on each point ([`lines_chart`], [`log_x_chart`]).
    pub whiskers: Vec<Whisker>,
}

/// The 95 % interval of the mean a line's point stands for, drawn at it as a vertical whisker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Whisker {
    pub x: f64,
    pub low: f64,
    pub high: f64,
}

/// One panel of a per-second figure: its lines share the y axis.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    pub unit: String,
    /// The top of the y axis, shared with the other servers' figures of the scenario.
    pub y_max: f64,
    pub lines: Vec<Line>,
}

/// Panels stacked over one shared time axis (seconds from the start of the load) that
/// only the bottom panel labels.
pub(crate) fn small_multiples(panels: &[Panel], t_max_s: f64) -> String {
    let size = (PANEL_SIZE.0, PANEL_SIZE.1 * panels.len() as u32 + 20);
    svg(size, |root| {
        let areas = root.split_evenly((panels.len(), 1));
        for (index, (area, panel)) in areas.iter().zip(panels).enumerate() {
            let last = index + 1 == panels.len();
            draw_panel(area, panel, t_max_s, last)?;
        }
        Ok(())
    })
}

fn draw_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    panel: &Panel,
    t_max_s: f64,
    time_axis: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(area)
        .margin_right(10)
        .margin_top(4)
        .x_label_area_size(if time_axis { 30 } else { 0 })
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..t_max_s.max(1.0), 0.0..panel.y_max.max(1e-9) * 1.05)?;
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.08))
        .y_labels(4)
        .y_label_formatter(&|y| short_number(*y))
        .y_desc(&panel.unit)
        .label_style(font(LABEL_PX))
        .axis_desc_style(font(LABEL_PX));
    if time_axis {
        mesh.x_desc("time since the load started (s)")
            .x_label_formatter(&|t| short_number(*t));
    } else {
        mesh.x_labels(0);
    }
    mesh.draw()?;
    // No key inside the panel, where it would hide the lines: the unit names the panel and
    // the figure's caption says which line is which.
    for line in &panel.lines {
        chart.draw_series(LineSeries::new(
            line.points.iter().copied(),
            line.color.stroke_width(if line.dashed { 1 } else { 2 }),
        ))?;
    }
    Ok(())
}

/// Where a percentile sits on the latency chart's x axis: its "nines",
/// `-log10(1 - p/100)`, so that p90, p99 and p99.9 are evenly spaced.
pub(crate) fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).log10()
}

/// Size of a chart across a knob, in pixels.
pub(crate) const KNOB_SIZE: (u32, u32) = (380, 260);

/// One metric across a knob: one line per server through its values (a dot on each), on a
/// numeric x axis for a load parameter or one slot per name for variants. Lines are solid
/// and keyed by swatches, so the SVG holds one polyline in a line's colour per line.
pub(crate) fn knob_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    x_names: &[String],
    xs: &[f64],
    numeric: bool,
    lines: &[Line],
) -> String {
    lines_chart(
        KNOB_SIZE,
        title,
        (x_desc, y_desc),
        x_names,
        xs,
        numeric,
        lines,
    )
}

/// The population's memory against its users: one line per server through its levels (a
/// dot on each, and a whisker where it has an interval), both axes from the data, wide as the
/// page's headline charts.
pub(crate) fn users_chart(title: &str, y_desc: &str, lines: &[Line]) -> String {
    let xs: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .chain([0.0])
        .collect();
    lines_chart(
        WIDE_SIZE,
        title,
        (
            "connected users (whiskers: 95 % intervals over the rounds, where wider than a dot)",
            y_desc,
        ),
        &[],
        &xs,
        true,
        lines,
    )
}

/// [`knob_chart`] at any size.
fn lines_chart(
    size: (u32, u32),
    title: &str,
    (x_desc, y_desc): (&str, &str),
    x_names: &[String],
    xs: &[f64],
    numeric: bool,
    lines: &[Line],
) -> String {
    svg(size, |root| {
        let top = lines
            .iter()
            .flat_map(|l| &l.points)
            .map(|p| p.1)
            .fold(0.0_f64, f64::max);
        // Headroom above the highest point keeps the key clear of the lines.
        let top = if top > 0.0 { top * 1.45 } else { 1.0 };
        let (lo, hi) = xs
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let pad = ((hi - lo) * 0.06).max(if numeric { 0.5 } else { 0.4 });
        let mut chart = ChartBuilder::on(root)
            .caption(title, font(CAPTION_PX))
            .margin(8)
            .margin_right(16)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d((lo - pad)..(hi + pad), 0.0..top)?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.08))
            .y_label_formatter(&|y| short_number(*y))
            .y_desc(y_desc)
            .x_desc(x_desc)
            .label_style(font(LABEL_PX))
            .axis_desc_style(font(LABEL_PX));
        let by_slot = |x: &f64| label_at(x_names, *x);
        if numeric {
            mesh.x_label_formatter(&|x| short_number(*x));
        } else {
            mesh.disable_x_mesh()
                .x_labels(x_names.len() * 2 + 1)
                .x_label_formatter(&by_slot);
        }
        mesh.draw()?;
        // Every line solid (a dashed one would be many polylines): the key names each.
        for line in lines {
            // The lines' x values are their own here: each whisker stands on its dot.
            draw_whiskers(&mut chart, line, 0, top)?;
            draw_keyed_line(&mut chart, line)?;
            draw_marks(&mut chart, line)?;
        }
        draw_legend(&mut chart)
    })
}

/// Size of a chart across room sizes or over a run's seconds, in pixels.
pub(crate) const WIDE_SIZE: (u32, u32) = (780, 300);

/// A figure against room size: one line per server with a dot on each size, the sizes on a
/// logarithmic axis (2 to 1,000 clients read evenly), the values from zero.
pub(crate) fn room_size_chart(title: &str, y_desc: &str, lines: &[Line]) -> String {
    let curves: Vec<CurveLine> = lines
        .iter()
        .map(|line| CurveLine {
            line: line.clone(),
            capped: Vec::new(),
        })
        .collect();
    log_x_chart(
        title,
        "room size (clients, log scale)",
        y_desc,
        &curves,
        (2.0, 10.0),
    )
}

/// One server's load curve: the steps free of the load generator as a solid keyed line with
/// a dot on each (and a whisker where it has an interval), and the steps where k6 was the
/// limit as hollow rings, not joined and without whiskers (their figures are the load
/// generator's).
#[derive(Debug, Clone)]
pub(crate) struct CurveLine {
    pub line: Line,
    pub capped: Vec<(f64, f64)>,
}

/// A figure against offered load (deliveries per second, logarithmic axis): one
/// [`CurveLine`] per server, the values from zero.
pub(crate) fn load_curve_chart(title: &str, y_desc: &str, curves: &[CurveLine]) -> String {
    log_x_chart(
        title,
        "offered deliveries/s (log scale; rings: k6 was the limit; whiskers: 95 % intervals \
         where wider than a dot)",
        y_desc,
        curves,
        (1e4, 1e6),
    )
}

/// Lines against a logarithmic x axis with a dot on each point, its whiskers set a few
/// pixels apart from the other lines' ([`dodge`]), and `capped` points as rings, the values
/// from zero; `empty` is the x range drawn when there is no point.
fn log_x_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    curves: &[CurveLine],
    empty: (f64, f64),
) -> String {
    svg(WIDE_SIZE, |root| {
        let points = || {
            curves
                .iter()
                .flat_map(|c| c.line.points.iter().chain(&c.capped))
        };
        let top = points().map(|p| p.1).fold(0.0_f64, f64::max);
        let top = if top > 0.0 { top * 1.45 } else { 1.0 };
        let (lo, hi) = points().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
        let (lo, hi) = if lo <= hi { (lo, hi) } else { empty };
        let mut chart = ChartBuilder::on(root)
            .caption(title, font(CAPTION_PX))
            .margin(8)
            .margin_right(16)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d((lo / 1.3..hi * 1.3).log_scale(), 0.0..top)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.08))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| short_number(*x))
            .y_label_formatter(&|y| short_number(*y))
            .label_style(font(LABEL_PX))
            .axis_desc_style(font(LABEL_PX))
            .draw()?;
        for (place, curve) in curves.iter().enumerate() {
            let dx = dodge((place, curves.len()));
            draw_whiskers(&mut chart, &curve.line, dx, top)?;
            draw_keyed_line(&mut chart, &curve.line)?;
            draw_marks(&mut chart, &curve.line)?;
            let color = curve.line.color;
            chart.draw_series(
                curve
                    .capped
                    .iter()
                    .map(|&p| Circle::new(p, 4, color.stroke_width(2))),
            )?;
        }
        draw_legend_at(&mut chart, legend_corner(points().copied(), (lo, hi)))
    })
}

/// The upper corner a legend covers no point in, on a log x axis over `(lo, hi)`: the right
/// one when the highest point in the left half stands above every point in the right half
/// (falling curves, such as CPU per delivery against load), else the left one.
fn legend_corner(
    points: impl Iterator<Item = (f64, f64)>,
    (lo, hi): (f64, f64),
) -> SeriesLabelPosition {
    let middle = (lo * hi).sqrt();
    let (mut left, mut right) = (0.0_f64, 0.0_f64);
    for (x, y) in points {
        if x < middle {
            left = left.max(y);
        } else {
            right = right.max(y);
        }
    }
    if left > right {
        SeriesLabelPosition::UpperRight
    } else {
        SeriesLabelPosition::UpperLeft
    }
}

/// A figure second by second: one line per server, with the span `shaded` (seconds) drawn
/// behind as a pale band and named in the x axis' description.
pub(crate) fn over_time_chart(
    title: &str,
    y_desc: &str,
    lines: &[Line],
    shaded: Option<(f64, f64, &str)>,
) -> String {
    svg(WIDE_SIZE, |root| {
        let points = || lines.iter().flat_map(|l| &l.points);
        let top = points().map(|p| p.1).fold(0.0_f64, f64::max);
        let top = if top > 0.0 { top * 1.3 } else { 1.0 };
        let right = points()
            .map(|p| p.0)
            .chain(shaded.map(|s| s.1))
            .fold(1.0_f64, f64::max);
        let left = points().map(|p| p.0).fold(0.0_f64, f64::min);
        let x_desc = match shaded {
            Some((_, _, name)) => format!("seconds since the scenario's start (shaded: {name})"),
            None => "seconds since the scenario's start".to_string(),
        };
        let mut chart = ChartBuilder::on(root)
            .caption(title, font(CAPTION_PX))
            .margin(8)
            .margin_right(16)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(left..right, 0.0..top)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.08))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .y_label_formatter(&|y| short_number(*y))
            .label_style(font(LABEL_PX))
            .axis_desc_style(font(LABEL_PX))
            .draw()?;
        if let Some((from, to, _)) = shaded {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(from, 0.0), (to, top)],
                MUTED.mix(0.15).filled(),
            )))?;
        }
        for line in lines {
            draw_keyed_line(&mut chart, line)?;
        }
        draw_legend(&mut chart)
    })
}

/// The latency chart's x position of the maximum, right of p99.9.
pub(crate) const MAX_AT: f64 = 4.0;

/// A latency line with at most this many points (p50, p95, p99, p99.9, max) gets a dot on
/// each.
const MARKED_POINTS: usize = 5;

/// Latency against percentile, one line per server, on a logarithmic ms axis.
pub(crate) fn latency_chart(title: &str, lines: &[Line]) -> String {
    svg(LATENCY_SIZE, |root| {
        let values = lines.iter().flat_map(|l| &l.points).map(|p| p.1);
        let (lo, hi) = values.fold((f64::MAX, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let x_start = lines
            .iter()
            .flat_map(|l| &l.points)
            .map(|p| p.0)
            .fold(MAX_AT, f64::min);
        let x_start = (x_start - 0.1).max(0.0);
        let lo = (lo * 0.8).max(0.01);
        // Headroom above the highest line keeps the key in the top-left corner clear.
        let hi = (hi * 4.0).max(lo * 10.0);
        let mut chart = ChartBuilder::on(root)
            .caption(title, font(CAPTION_PX))
            .margin(8)
            .margin_right(16)
            .x_label_area_size(34)
            .y_label_area_size(56)
            // Base 2: a tick at every doubling reads better than one per decade.
            .build_cartesian_2d(x_start..MAX_AT + 0.15, (lo..hi).log_scale().base(2.0))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.08))
            .x_labels(6)
            .x_label_formatter(&|x| percentile_label(*x))
            .x_desc("percentile")
            .y_labels(12)
            .y_desc("latency (ms, log scale)")
            .y_label_formatter(&|y| short_number(*y))
            .label_style(font(LABEL_PX))
            .axis_desc_style(font(LABEL_PX))
            .draw()?;
        for line in lines {
            let color = line.color;
            let style = color.stroke_width(2);
            let drawn = if line.dashed {
                chart.draw_series(DashedLineSeries::new(
                    line.points.iter().copied(),
                    6,
                    4,
                    style,
                ))?
            } else {
                chart.draw_series(LineSeries::new(line.points.iter().copied(), style))?
            };
            let dashed = line.dashed;
            drawn.label(&line.label).legend(move |(x, y)| {
                let to = if dashed { x + 6 } else { x + 16 };
                PathElement::new(vec![(x, y), (to, y)], style)
            });
            // Marks on the few named percentiles; a full curve is a line only.
            if line.points.len() <= MARKED_POINTS {
                draw_marks(&mut chart, line)?;
            }
        }
        draw_legend(&mut chart)
    })
}

fn percentile_label(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 {
        return String::new();
    }
    match x.round() as i64 {
        0 => "p0".into(),
        1 => "p90".into(),
        2 => "p99".into(),
        3 => "p99.9".into(),
        4 => "max".into(),
        _ => String::new(),
    }
}

/// The group whose slot is centred at `x`, if any.
fn label_at(names: &[String], x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 || x < -0.1 {
        return String::new();
    }
    names.get(x.round() as usize).cloned().unwrap_or_default()
}

/// Axis numbers: `12k` for thousands, up to two decimals below ten.
fn short_number(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if a >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Draws on a fresh SVG canvas and returns it. Drawing into a string cannot fail for
/// want of space or I/O, so an error here is a bug in the chart code.
/// The series legend of a line chart, in its upper left corner.
fn draw_legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
) -> Result<(), Box<dyn std::error::Error>> {
    draw_legend_at(chart, SeriesLabelPosition::UpperLeft)
}

/// The series legend in the upper corner `position`.
fn draw_legend_at<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), Box<dyn std::error::Error>> {
    chart
        .configure_series_labels()
        .position(position)
        .label_font(font(LABEL_PX))
        .background_style(WHITE.mix(0.9))
        .border_style(MUTED.mix(0.4))
        .draw()?;
    Ok(())
}

/// `line` as a solid line, named in the key by a swatch of its colour.
fn draw_keyed_line<'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    line: &Line,
) -> Result<(), Box<dyn std::error::Error>>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let style = line.color.stroke_width(2);
    let drawn = chart.draw_series(LineSeries::new(line.points.iter().copied(), style))?;
    let color = line.color;
    drawn
        .label(&line.label)
        .legend(move |(x, y)| Rectangle::new([(x, y - 4), (x + 12, y + 4)], color.filled()));
    Ok(())
}

/// The radius of a line's dot on each point, in pixels.
const DOT_PX: i32 = 3;

/// A dot on each of a line's points.
fn draw_marks<'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    line: &Line,
) -> Result<(), Box<dyn std::error::Error>>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    chart.draw_series(
        line.points
            .iter()
            .map(|&p| Circle::new(p, DOT_PX, line.color.filled())),
    )?;
    Ok(())
}

/// Half the width of a whisker's cap, in pixels.
const CAP_PX: i32 = 2;
/// How far apart, in pixels, the whiskers of neighbouring lines stand where lines share
/// their x values (the load curve's steps): whiskers drawn over each other could not be told
/// apart.
const DODGE_PX: f64 = 4.0;

/// How far sideways the whiskers of the line at `place` of `lines` stand, in pixels: the
/// lines' whiskers side by side, centred on their x.
fn dodge((place, lines): (usize, usize)) -> i32 {
    ((place as f64 - (lines as f64 - 1.0) / 2.0) * DODGE_PX).round() as i32
}

/// Each of a line's whiskers, thin and in the line's colour, with a short cap at each end,
/// `dx` pixels beside its point; one no longer than its dot is wide is left out (the dot
/// says as much, and a stub beside it would read as a stray mark). The y axis runs from zero
/// to `top`: an end past it is cut there and left without a cap, so that a reader sees the
/// interval runs on.
fn draw_whiskers<'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    line: &Line,
    dx: i32,
    top: f64,
) -> Result<(), Box<dyn std::error::Error>>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let style = line.color.stroke_width(1);
    for w in &line.whiskers {
        let (low, high) = (w.low.max(0.0), w.high.min(top));
        // Drawn in pixels from its low end, so that it can stand beside its point.
        let coord = chart.as_coord_spec();
        let length = coord.translate(&(w.x, low)).1 - coord.translate(&(w.x, high)).1;
        if length <= 2 * DOT_PX {
            continue;
        }
        let whisker = PathElement::new(vec![(dx, 0), (dx, -length)], style);
        chart.draw_series([EmptyElement::at((w.x, low)) + whisker])?;
        let caps = [(0, w.low >= 0.0), (-length, w.high <= top)];
        chart.draw_series(caps.into_iter().filter(|c| c.1).map(|(y, _)| {
            EmptyElement::at((w.x, low))
                + PathElement::new(vec![(dx - CAP_PX, y), (dx + CAP_PX, y)], style)
        }))?;
    }
    Ok(())
}

fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), Box<dyn std::error::Error>>,
) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).expect("filling an SVG string");
        draw(&root).expect("drawing a chart into an SVG string");
        root.present().expect("finishing an SVG string");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_spread_the_tail_percentiles_evenly() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.0) - 2.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(percentile_label(3.0), "p99.9");
        assert_eq!(percentile_label(2.5), "");
    }

    #[test]
    fn a_knob_chart_draws_one_polyline_per_server_and_names_each() {
        let line = |label: &str, language: &str, points: Vec<(f64, f64)>, dashed| Line {
            label: label.into(),
            color: language_color(language, 0),
            points,
            dashed,
            whiskers: Vec::new(),
        };
        let out = knob_chart(
            "Deliveries/s across clients",
            "clients",
            "deliveries/s",
            &[
                "clients=100".into(),
                "clients=200".into(),
                "clients=500".into(),
            ],
            &[100.0, 200.0, 500.0],
            true,
            &[
                line(
                    "profile-b/go",
                    "go",
                    vec![(100.0, 5e4), (200.0, 9e4), (500.0, 1.2e5)],
                    false,
                ),
                line(
                    "profile-b/rust",
                    "rust",
                    vec![(100.0, 6e4), (500.0, 1.4e5)],
                    false,
                ),
                line(
                    "profile-a/zig",
                    "zig",
                    vec![(100.0, 4e4), (200.0, 7e4), (500.0, 8e4)],
                    true,
                ),
            ],
        );
        assert!(out.starts_with("<svg"), "{out}");
        let polylines: Vec<&str> = out.lines().filter(|l| l.starts_with("<polyline")).collect();
        for language in ["go", "rust", "zig"] {
            let stroke = format!(
                "stroke=\"{}\"",
                css(language_color(language, 0)).to_uppercase()
            );
            let drawn = polylines.iter().filter(|l| l.contains(&stroke)).count();
            assert_eq!(drawn, 1, "{language}: {stroke}\n{out}");
        }
        for name in [
            "profile-b/go",
            "profile-b/rust",
            "profile-a/zig",
            "Deliveries/s across clients",
        ] {
            assert!(out.contains(name), "{name}");
        }
        // A dot on each of the 8 values.
        assert_eq!(out.matches("<circle").count(), 8, "{out}");
    }

    #[test]
    fn a_bar_chart_is_svg_with_its_title_and_values_as_text() {
        let out = bar_chart(
            "Throughput",
            "msg/s",
            &[BarGroup {
                name: "Profile A".into(),
                bars: vec![Bar {
                    color: language_color("go", 0),
                    mean: 96.2,
                    interval: Some((95.0, 97.0)),
                    bound: true,
                }],
            }],
            |v| format!("{v:.1}"),
        );
        assert!(out.starts_with("<svg"), "{out}");
        assert!(out.contains(">\nThroughput\n</text>") || out.contains("Throughput"));
        assert!(out.contains("96.2 †"), "{out}");
        assert!(out.contains("Profile A"), "{out}");
    }

    #[test]
    fn the_legend_goes_to_the_upper_corner_the_curves_leave_free() {
        let cost = [(5e4, 25.9), (1e5, 11.2), (2e5, 3.9), (4e5, 2.1)];
        let p99 = [(5e4, 21.0), (1e5, 30.0), (2e5, 54.0), (4e5, 785.0)];
        assert!(matches!(
            legend_corner(cost.into_iter(), (5e4, 4e5)),
            SeriesLabelPosition::UpperRight
        ));
        assert!(matches!(
            legend_corner(p99.into_iter(), (5e4, 4e5)),
            SeriesLabelPosition::UpperLeft
        ));
    }
}
