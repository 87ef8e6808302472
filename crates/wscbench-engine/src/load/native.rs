//! The native load path's own output: the report `k6/x/chat` writes at the end of a run
//! (counters and full HDR latency histograms per k6 instance), merged exactly across
//! instances, and read into the result's k6 metrics. Percentiles are never averaged. The same
//! per window: the steps of a stepped scenario and the fixed-length periods of any run.
//!
//! Two latencies (docs/methodology.md, "Latency: intended time and coordinated omission"):
//! service time (`latency_us`, from the moment a chat was written) and response time
//! (`response_time_us`, from its intended time, with the chats the server made a client miss).
//! Reports written before response time existed have only the first; for them response time is
//! service time and every chat sent was intended and on time.

use hdrhistogram::Histogram;
use serde::Deserialize;
use wscbench_results::{
    DeflateParams, ErrorCounts, K6Metrics, LatencyMs, LatencySource, Negotiated,
};

/// The `format` this reader understands.
pub const FORMAT: &str = "wscbench-native/1";

/// Why a native report could not be used.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// Not JSON of the expected shape.
    #[error("the native load report is not readable: {0}")]
    Malformed(#[from] serde_json::Error),
    /// Another format version.
    #[error("the native load report has format {found:?}; this wscbench reads {FORMAT:?}")]
    Format {
        /// What the file said.
        found: String,
    },
    /// Histograms of different settings cannot be merged exactly.
    #[error("the native load reports' histograms have different settings")]
    Settings,
    /// A bucket outside the histogram's range.
    #[error("a latency bucket of {value_us} µs is outside the histogram's range")]
    Bucket {
        /// The bucket's value.
        value_us: u64,
    },
}

impl NativeError {
    /// A report that cannot be read or merged is a failure.
    pub fn class(&self) -> crate::ErrorClass {
        match self {
            Self::Malformed(_) | Self::Format { .. } | Self::Settings | Self::Bucket { .. } => {
                crate::ErrorClass::Failure
            }
        }
    }
}

/// One k6 instance's report (`native.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct NativeReport {
    /// `wscbench-native/1`.
    pub format: String,
    /// The instance (host name of the k6 container).
    #[serde(default)]
    pub instance: String,
    /// User + system CPU time of the k6 process, in nanoseconds.
    #[serde(default)]
    pub process_cpu_ns: u64,
    /// Counters summed over every client of the instance.
    pub counters: NativeCounters,
    /// Service time of chats: receive time minus the moment each was written (in a split run:
    /// of chats this instance sent itself).
    pub latency_us: LatencyBuckets,
    /// Response time of the same chats: receive time minus the intended time, plus the chats
    /// the server made a client miss (each counted `missed_chat_weight` times); absent in older
    /// reports, where it is `latency_us`.
    #[serde(default)]
    pub response_time_us: Option<LatencyBuckets>,
    /// Pong latency from each ping's intended time (clients that ping: the population);
    /// absent in older reports.
    #[serde(default)]
    pub pong_latency_us: Option<LatencyBuckets>,
    /// How many response-time samples each missed chat counts for: the timed deliveries per
    /// chat sent (absent in older reports).
    #[serde(default)]
    pub missed_chat_weight: Option<f64>,
    /// The instance's number in a split run, 1 to N (0 outside one).
    #[serde(default)]
    pub instance_id: u32,
    /// Latency of chats another instance of a split run sent; absent in older reports.
    #[serde(default)]
    pub cross_instance_latency_us: Option<LatencyBuckets>,
    /// Length of every period, in ms (0 in reports written before periods existed).
    #[serde(default)]
    pub period_ms: u64,
    /// Fixed-length windows, aligned to multiples of `period_ms` since the epoch.
    #[serde(default)]
    pub periods: Vec<NativeWindow>,
    /// The windows of the step schedule the scenario set, in order.
    #[serde(default)]
    pub steps: Vec<NativeWindow>,
    /// One client in this many was a latency probe, which timed the chats it received
    /// (absent in reports written before probes existed, when every client was one).
    #[serde(default = "every_client")]
    pub latency_probe_every: u32,
    /// Each distinct outcome of the sessions' handshakes (TLS version and cipher suite, the
    /// server's permessage-deflate answer) with its sessions; absent in older reports.
    #[serde(default, deserialize_with = "null_as_default")]
    pub negotiated: Vec<NativeNegotiation>,
    /// Failed connects by reason; absent in older reports.
    #[serde(default, deserialize_with = "null_as_default")]
    pub connect_error_reasons: std::collections::BTreeMap<String, u64>,
    /// The slow clients of the slow-consumers scenario, kept out of every other figure;
    /// `null` or absent when the scenario had none (and in older reports).
    #[serde(default)]
    pub slow: Option<NativeSlow>,
}

/// The slow clients of one instance (slow-consumers): their chats received and latencies are
/// not in the report's counters, histograms or windows, which are the healthy clients'.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NativeSlow {
    /// Slow clients started.
    pub clients: u64,
    /// Chats the slow clients received.
    pub received: u64,
    /// Slow clients whose connection the server closed or dropped before their own leave.
    pub closed_by_server: u64,
    /// When each of those was closed, in ms since `started_epoch_ms`.
    #[serde(deserialize_with = "null_as_default")]
    pub closed_at_ms: Vec<u64>,
    /// The slow clients' errors.
    pub errors: u64,
    /// How long the slow clients did not read, in ms.
    pub read_paused_ms: u64,
    /// Epoch ms that `closed_at_ms` counts from (`start_ms`): the test's start as the script
    /// gave it, which the shape's phases count from too; absent (or 0) in reports that do
    /// not give it.
    #[serde(rename = "start_ms", alias = "started_epoch_ms")]
    pub started_epoch_ms: Option<u64>,
}

/// One outcome of the handshakes, as the extension reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub struct NativeNegotiation {
    /// `TLS 1.3`; empty in cleartext.
    #[serde(default)]
    pub tls_version: String,
    /// `TLS_AES_128_GCM_SHA256`; empty in cleartext.
    #[serde(default)]
    pub tls_cipher_suite: String,
    /// The server's `Sec-WebSocket-Extensions` permessage-deflate answer; empty without one.
    #[serde(default)]
    pub deflate: String,
    /// Sessions that ended their handshake this way.
    #[serde(default)]
    pub sessions: u64,
}

/// A JSON `null` (Go's nil map or slice) reads as the type's default.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn every_client() -> u32 {
    1
}

/// One window of a native report: its counters and latency histogram.
#[derive(Debug, Clone, Deserialize)]
pub struct NativeWindow {
    /// The step's planned clients (steps only).
    #[serde(default)]
    pub clients: u64,
    /// Start, epoch ms.
    pub from_ms: u64,
    /// End (exclusive), epoch ms.
    pub to_ms: u64,
    /// What was counted while the window was current.
    pub counters: NativeCounters,
    /// Service times recorded while it was current.
    pub latency_us: LatencyBuckets,
    /// Response times recorded while it was current, and the chats declared missed in it;
    /// absent in older reports, where it is `latency_us`.
    #[serde(default)]
    pub response_time_us: Option<LatencyBuckets>,
    /// Pong latencies recorded while it was current; absent in older reports.
    #[serde(default)]
    pub pong_latency_us: Option<LatencyBuckets>,
}

/// The native client's counters. Every chat a client's schedule meant to send is counted once,
/// sent or missed: `chats_intended` = the four `chats_sent_*` + the three `chats_missed_*`, and
/// `chat_sent` = the four `chats_sent_*`. "Late" is 10 ms or more after the intended time; its
/// cause is the largest part of the delay: `join` (the server had not acknowledged the join),
/// `write` (a write was blocked: the server was not reading), `timer` (the client itself was
/// late with its write path free: the load generator's fault).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(from = "RawCounters")]
pub struct NativeCounters {
    /// Sessions started.
    pub sessions: u64,
    /// Sessions that ended on their own.
    pub sessions_closed: u64,
    /// Connections that never opened.
    pub connect_errors: u64,
    /// Sessions closed with a code other than 1000/1001, or without a close frame.
    pub abnormal_closes: u64,
    /// Other WebSocket errors.
    pub ws_errors: u64,
    /// Chats sent.
    pub chat_sent: u64,
    /// Chats from other members received.
    pub chat_received: u64,
    /// Frames sent.
    pub msgs_sent: u64,
    /// Frames received.
    pub msgs_received: u64,
    /// Frames that were not chat protocol.
    pub malformed: u64,
    /// Chats the clients' schedules meant to send, sent or missed (older reports: `chat_sent`).
    pub chats_intended: u64,
    /// Chats sent within 10 ms of their intended time (older reports: `chat_sent`).
    pub chats_sent_on_time: u64,
    /// Chats sent late, mostly waiting for the join's acknowledgement (the server's fault).
    pub chats_sent_late_join: u64,
    /// Chats sent late, mostly behind a blocked write (the server's fault).
    pub chats_sent_late_write: u64,
    /// Chats sent late by the client's own timer or CPU (the load generator's fault).
    pub chats_sent_late_timer: u64,
    /// Chats never sent: the join was not acknowledged in time.
    pub chats_missed_join: u64,
    /// Chats never sent: past the catch-up bounds behind a blocked write, or their write failed.
    pub chats_missed_write: u64,
    /// Chats never sent without the server holding them: the client's own lateness past the
    /// catch-up bounds, or a session that ended at their moment.
    pub chats_missed_timer: u64,
}

/// The counters as a report has them: the chat counters by cause are absent in older reports.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RawCounters {
    sessions: u64,
    sessions_closed: u64,
    connect_errors: u64,
    abnormal_closes: u64,
    ws_errors: u64,
    chat_sent: u64,
    chat_received: u64,
    msgs_sent: u64,
    msgs_received: u64,
    malformed: u64,
    chats_intended: Option<u64>,
    chats_sent_on_time: Option<u64>,
    chats_sent_late_join: u64,
    chats_sent_late_write: u64,
    chats_sent_late_timer: u64,
    chats_missed_join: u64,
    chats_missed_write: u64,
    chats_missed_timer: u64,
}

impl From<RawCounters> for NativeCounters {
    /// Before intended times, every chat sent was intended and counted as on time.
    fn from(r: RawCounters) -> Self {
        NativeCounters {
            sessions: r.sessions,
            sessions_closed: r.sessions_closed,
            connect_errors: r.connect_errors,
            abnormal_closes: r.abnormal_closes,
            ws_errors: r.ws_errors,
            chat_sent: r.chat_sent,
            chat_received: r.chat_received,
            msgs_sent: r.msgs_sent,
            msgs_received: r.msgs_received,
            malformed: r.malformed,
            chats_intended: r.chats_intended.unwrap_or(r.chat_sent),
            chats_sent_on_time: r.chats_sent_on_time.unwrap_or(r.chat_sent),
            chats_sent_late_join: r.chats_sent_late_join,
            chats_sent_late_write: r.chats_sent_late_write,
            chats_sent_late_timer: r.chats_sent_late_timer,
            chats_missed_join: r.chats_missed_join,
            chats_missed_write: r.chats_missed_write,
            chats_missed_timer: r.chats_missed_timer,
        }
    }
}

/// An HDR histogram as a list of non-empty buckets.
#[derive(Debug, Clone, Deserialize)]
pub struct LatencyBuckets {
    /// Lowest trackable value, µs.
    pub lowest_trackable_us: u64,
    /// Highest trackable value, µs.
    pub highest_trackable_us: u64,
    /// Significant decimal figures.
    pub significant_figures: u8,
    /// `[highest equivalent value in µs, count]` for every non-empty bucket.
    #[serde(default)]
    pub buckets: Vec<[u64; 2]>,
}

impl NativeReport {
    /// Parses one report.
    pub fn from_json(text: &str) -> Result<Self, NativeError> {
        let report: NativeReport = serde_json::from_str(text)?;
        if report.format != FORMAT {
            return Err(NativeError::Format {
                found: report.format,
            });
        }
        Ok(report)
    }
}

/// Several instances' reports added up: counters summed, histograms merged bucket by bucket.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Summed counters.
    pub counters: NativeCounters,
    /// Summed CPU time of the k6 processes, in nanoseconds.
    pub process_cpu_ns: u64,
    /// The merged service-time histogram (from the moment a chat was written), in µs.
    pub latency: Histogram<u64>,
    /// The merged response-time histogram (from the intended time, missed chats included), in
    /// µs; a report without one adds its service time.
    pub response_time_us: Histogram<u64>,
    /// The merged histogram of chats received by another instance than the sender's, in µs.
    pub cross_latency: Histogram<u64>,
    /// The steps, merged by position.
    pub steps: Vec<MergedWindow>,
    /// Length of every period, in ms.
    pub period_ms: u64,
    /// The periods, merged by start, ascending.
    pub periods: Vec<MergedWindow>,
    /// One client in this many was a latency probe (the largest over instances).
    pub latency_probe_every: u32,
    /// The handshakes' outcomes, sessions added over instances, most sessions first.
    pub negotiated: Vec<Negotiated>,
    /// Failed connects by reason, added over instances.
    pub connect_error_reasons: std::collections::BTreeMap<String, u64>,
    /// The slow clients, added over instances; `None` when no report had any.
    pub slow: Option<MergedSlow>,
}

/// The slow clients of every instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergedSlow {
    /// Slow clients started.
    pub clients: u64,
    /// Chats they received.
    pub received: u64,
    /// Slow clients the server closed or dropped before their own leave.
    pub closed_by_server: u64,
    /// When each of those was closed, epoch ms (on an instance without a start time, ms
    /// since its own start), ascending.
    pub closed_at_epoch_ms: Vec<u64>,
    /// Their errors.
    pub errors: u64,
    /// The longest pause in reading, in ms.
    pub read_paused_ms: u64,
    /// The earliest scenario start the instances gave, epoch ms.
    pub started_epoch_ms: Option<u64>,
}

impl MergedSlow {
    fn add(&mut self, s: &NativeSlow) {
        self.clients += s.clients;
        self.received += s.received;
        self.closed_by_server += s.closed_by_server;
        let given = s.started_epoch_ms.filter(|&t| t > 0);
        let start = given.unwrap_or(0);
        self.closed_at_epoch_ms
            .extend(s.closed_at_ms.iter().map(|&t| start + t));
        self.closed_at_epoch_ms.sort_unstable();
        self.errors += s.errors;
        self.read_paused_ms = self.read_paused_ms.max(s.read_paused_ms);
        self.started_epoch_ms = match (self.started_epoch_ms, given) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// One window, merged over instances.
#[derive(Debug, Clone)]
pub struct MergedWindow {
    /// The step's planned clients (steps only).
    pub clients: u64,
    /// Start, epoch ms.
    pub from_ms: u64,
    /// End (exclusive), epoch ms.
    pub to_ms: u64,
    /// Summed counters.
    pub counters: NativeCounters,
    /// Merged service times, in µs.
    pub latency: Histogram<u64>,
    /// Merged response times, in µs (service times where a report has none).
    pub response_time_us: Histogram<u64>,
    /// Merged pong latencies, in µs (empty where no client pinged).
    pub pong_latency_us: Histogram<u64>,
}

impl NativeCounters {
    fn add(&mut self, c: &NativeCounters) {
        *self = NativeCounters {
            sessions: self.sessions + c.sessions,
            sessions_closed: self.sessions_closed + c.sessions_closed,
            connect_errors: self.connect_errors + c.connect_errors,
            abnormal_closes: self.abnormal_closes + c.abnormal_closes,
            ws_errors: self.ws_errors + c.ws_errors,
            chat_sent: self.chat_sent + c.chat_sent,
            chat_received: self.chat_received + c.chat_received,
            msgs_sent: self.msgs_sent + c.msgs_sent,
            msgs_received: self.msgs_received + c.msgs_received,
            malformed: self.malformed + c.malformed,
            chats_intended: self.chats_intended + c.chats_intended,
            chats_sent_on_time: self.chats_sent_on_time + c.chats_sent_on_time,
            chats_sent_late_join: self.chats_sent_late_join + c.chats_sent_late_join,
            chats_sent_late_write: self.chats_sent_late_write + c.chats_sent_late_write,
            chats_sent_late_timer: self.chats_sent_late_timer + c.chats_sent_late_timer,
            chats_missed_join: self.chats_missed_join + c.chats_missed_join,
            chats_missed_write: self.chats_missed_write + c.chats_missed_write,
            chats_missed_timer: self.chats_missed_timer + c.chats_missed_timer,
        };
    }

    /// Chats sent late, whatever the cause.
    #[cfg(test)]
    fn chats_sent_late(&self) -> u64 {
        self.chats_sent_late_join + self.chats_sent_late_write + self.chats_sent_late_timer
    }

    /// Chats never sent, whatever the cause.
    #[cfg(test)]
    fn chats_missed(&self) -> u64 {
        self.chats_missed_join + self.chats_missed_write + self.chats_missed_timer
    }

    /// Chats sent per chat intended, 0 to 1; `None` when none was intended.
    pub fn sent_per_intended(&self) -> Option<f64> {
        (self.chats_intended > 0).then(|| self.chat_sent as f64 / self.chats_intended as f64)
    }

    /// The share of intended chats the load generator itself made late or missed (the timer
    /// cause), 0 to 1; `None` when none was intended.
    #[cfg(test)]
    fn timer_late_share(&self) -> Option<f64> {
        (self.chats_intended > 0).then(|| {
            (self.chats_sent_late_timer + self.chats_missed_timer) as f64
                / self.chats_intended as f64
        })
    }

    /// Client errors: failed connects, abnormal closes and WebSocket errors. A failed connect
    /// is also a WebSocket error, as in the result's `errors`.
    pub fn errors(&self) -> u64 {
        self.connect_errors + self.abnormal_closes + self.ws_errors
    }
}

fn record(latency: &mut Histogram<u64>, buckets: &LatencyBuckets) -> Result<(), NativeError> {
    for &[value_us, count] in &buckets.buckets {
        latency
            .record_n(value_us, count)
            .map_err(|_| NativeError::Bucket { value_us })?;
    }
    Ok(())
}

/// The histogram settings every report (and each of its histograms) shares; an error when
/// two differ, since only histograms of the same settings merge exactly.
fn common_settings(reports: &[NativeReport]) -> Result<(u64, u64, u8), NativeError> {
    let settings = |r: &NativeReport| settings_of(&r.latency_us);
    let (low, high, figures) = reports.first().map(settings).unwrap_or((1, 60_000_000, 3));
    if reports.iter().any(|r| settings(r) != (low, high, figures)) {
        return Err(NativeError::Settings);
    }
    if reports.iter().any(|r| {
        r.cross_instance_latency_us.as_ref().is_some_and(|c| {
            (
                c.lowest_trackable_us,
                c.highest_trackable_us,
                c.significant_figures,
            ) != (low, high, figures)
        })
    }) {
        return Err(NativeError::Settings);
    }
    let same = |l: &LatencyBuckets| settings_of(l) == (low, high, figures);
    if reports
        .iter()
        .any(|r| r.response_time_us.as_ref().is_some_and(|l| !same(l)))
    {
        return Err(NativeError::Settings);
    }
    let window_settings_differ = reports.iter().any(|r| {
        r.steps
            .iter()
            .chain(&r.periods)
            .any(|w| !same(&w.latency_us) || w.response_time_us.as_ref().is_some_and(|l| !same(l)))
    });
    if window_settings_differ {
        return Err(NativeError::Settings);
    }
    Ok((low, high, figures))
}

/// Merges the reports of one or more k6 instances.
pub fn merge(reports: &[NativeReport]) -> Result<Merged, NativeError> {
    let (low, high, figures) = common_settings(reports)?;
    let empty =
        || Histogram::new_with_bounds(low.max(1), high, figures).map_err(|_| NativeError::Settings);
    let mut latency = empty()?;
    let mut response_time_us = empty()?;
    let mut cross_latency = empty()?;
    let mut counters = NativeCounters::default();
    let mut process_cpu_ns = 0;
    let mut steps: Vec<MergedWindow> = Vec::new();
    let mut periods: std::collections::BTreeMap<u64, MergedWindow> = Default::default();
    let mut period_ms = 0;
    let mut latency_probe_every = 1;
    let mut negotiated: std::collections::BTreeMap<NativeNegotiation, u64> = Default::default();
    let mut connect_error_reasons = std::collections::BTreeMap::new();
    let mut slow: Option<MergedSlow> = None;
    let new_window = |w: &NativeWindow| -> Result<MergedWindow, NativeError> {
        Ok(MergedWindow {
            clients: w.clients,
            from_ms: w.from_ms,
            to_ms: w.to_ms,
            counters: NativeCounters::default(),
            latency: empty()?,
            response_time_us: empty()?,
            pong_latency_us: empty()?,
        })
    };
    for report in reports {
        record(&mut latency, &report.latency_us)?;
        record_response(
            &mut response_time_us,
            &report.response_time_us,
            &report.latency_us,
        )?;
        if let Some(cross) = &report.cross_instance_latency_us {
            record(&mut cross_latency, cross)?;
        }
        counters.add(&report.counters);
        process_cpu_ns += report.process_cpu_ns;
        period_ms = period_ms.max(report.period_ms);
        latency_probe_every = latency_probe_every.max(report.latency_probe_every);
        for n in &report.negotiated {
            let key = NativeNegotiation {
                sessions: 0,
                ..n.clone()
            };
            *negotiated.entry(key).or_default() += n.sessions;
        }
        for (reason, count) in &report.connect_error_reasons {
            *connect_error_reasons.entry(reason.clone()).or_default() += count;
        }
        if let Some(s) = &report.slow {
            slow.get_or_insert_with(MergedSlow::default).add(s);
        }
        for (i, w) in report.steps.iter().enumerate() {
            if steps.len() <= i {
                steps.push(new_window(w)?);
            }
            steps[i].counters.add(&w.counters);
            record(&mut steps[i].latency, &w.latency_us)?;
            record_response(
                &mut steps[i].response_time_us,
                &w.response_time_us,
                &w.latency_us,
            )?;
            if let Some(pong) = &w.pong_latency_us {
                record(&mut steps[i].pong_latency_us, pong)?;
            }
        }
        for w in &report.periods {
            let merged = match periods.entry(w.from_ms) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(new_window(w)?),
            };
            merged.counters.add(&w.counters);
            record(&mut merged.latency, &w.latency_us)?;
            record_response(
                &mut merged.response_time_us,
                &w.response_time_us,
                &w.latency_us,
            )?;
        }
    }
    Ok(Merged {
        counters,
        process_cpu_ns,
        latency,
        response_time_us,
        cross_latency,
        steps,
        period_ms,
        periods: periods.into_values().collect(),
        latency_probe_every,
        negotiated: negotiated_of(negotiated),
        connect_error_reasons,
        slow,
    })
}

/// The schema's form of the handshakes' outcomes, most sessions first.
fn negotiated_of(merged: std::collections::BTreeMap<NativeNegotiation, u64>) -> Vec<Negotiated> {
    let some = |s: String| (!s.is_empty()).then_some(s);
    let mut out: Vec<Negotiated> = merged
        .into_iter()
        .map(|(n, sessions)| Negotiated {
            deflate: DeflateParams::parse(&n.deflate),
            tls_version: some(n.tls_version),
            tls_cipher_suite: some(n.tls_cipher_suite),
            sessions,
        })
        .collect();
    out.sort_by_key(|n| std::cmp::Reverse(n.sessions));
    out
}

/// Records a response-time histogram, or the service time of a report written before response
/// time existed (its chats were stamped when written).
fn record_response(
    into: &mut Histogram<u64>,
    response: &Option<LatencyBuckets>,
    service: &LatencyBuckets,
) -> Result<(), NativeError> {
    record(into, response.as_ref().unwrap_or(service))
}

fn settings_of(l: &LatencyBuckets) -> (u64, u64, u8) {
    (
        l.lowest_trackable_us,
        l.highest_trackable_us,
        l.significant_figures,
    )
}

/// Percentiles of the latency curve kept in a result.
const CURVE: [f64; 12] = [
    0.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 99.999, 100.0,
];

/// Latency in milliseconds, from a full histogram in µs.
pub fn latency_ms(h: &Histogram<u64>) -> LatencyMs {
    let ms = |us: u64| us as f64 / 1000.0;
    let at = |p: f64| ms(h.value_at_quantile(p / 100.0));
    if h.is_empty() {
        return LatencyMs {
            count: Some(0),
            ..LatencyMs::default()
        };
    }
    LatencyMs {
        avg_ms: h.mean() / 1000.0,
        p50_ms: at(50.0),
        p95_ms: at(95.0),
        p99_ms: at(99.0),
        max_ms: ms(h.max()),
        p999_ms: Some(at(99.9)),
        count: Some(h.len()),
        curve: CURVE.iter().map(|&p| [p, at(p)]).collect(),
    }
}

impl Merged {
    /// Service time (latency from the moment a chat was written) in milliseconds, from the
    /// full histogram.
    pub fn latency_ms(&self) -> LatencyMs {
        latency_ms(&self.latency)
    }

    /// Response time (latency from the intended time, missed chats included) in milliseconds,
    /// from the full histogram.
    pub fn response_time_ms(&self) -> LatencyMs {
        latency_ms(&self.response_time_us)
    }

    /// Latency of chats between instances, in milliseconds; `None` when there was none.
    pub fn cross_latency_ms(&self) -> Option<LatencyMs> {
        (!self.cross_latency.is_empty()).then(|| latency_ms(&self.cross_latency))
    }
}

impl Merged {
    /// The result's k6 metrics and errors. `connect_p95_ms` comes from k6's own summary
    /// (the extension feeds `ws_connecting` one sample per session). The latency is the
    /// response time (from the intended time), the service time beside it.
    pub fn k6_metrics(&self, connect_p95_ms: f64) -> (K6Metrics, ErrorCounts) {
        metrics_of(
            &self.counters,
            &self.latency,
            &self.response_time_us,
            self.latency_probe_every,
            connect_p95_ms,
            &self.connect_error_reasons,
        )
    }
}

impl MergedWindow {
    /// The k6 metrics and errors counted while this window was current, as
    /// [`Merged::k6_metrics`] reads them for a whole run.
    pub fn k6_metrics(
        &self,
        connect_p95_ms: f64,
        latency_probe_every: u32,
    ) -> (K6Metrics, ErrorCounts) {
        metrics_of(
            &self.counters,
            &self.latency,
            &self.response_time_us,
            latency_probe_every,
            connect_p95_ms,
            &Default::default(),
        )
    }
}

/// The result's k6 metrics and errors from counters and the two latency histograms.
fn metrics_of(
    c: &NativeCounters,
    service: &Histogram<u64>,
    response: &Histogram<u64>,
    latency_probe_every: u32,
    connect_p95_ms: f64,
    connect_error_reasons: &std::collections::BTreeMap<String, u64>,
) -> (K6Metrics, ErrorCounts) {
    (
        K6Metrics {
            sessions: c.sessions,
            sessions_closed: c.sessions_closed,
            connect_p95_ms,
            ws_msgs_sent: c.msgs_sent,
            ws_msgs_received: c.msgs_received,
            chat_sent: c.chat_sent,
            chat_received: c.chat_received,
            latency: latency_ms(response),
            latency_source: LatencySource::ResponseTime,
            latency_probe_every,
            malformed: c.malformed,
            service_time: Some(latency_ms(service)),
            chats: Some(wscbench_results::ChatSchedule {
                intended: c.chats_intended,
                sent_on_time: c.chats_sent_on_time,
                sent_late_join: c.chats_sent_late_join,
                sent_late_write: c.chats_sent_late_write,
                sent_late_timer: c.chats_sent_late_timer,
                missed_join: c.chats_missed_join,
                missed_write: c.chats_missed_write,
                missed_timer: c.chats_missed_timer,
            }),
        },
        ErrorCounts {
            failed_connects: c.connect_errors,
            abnormal_closes: c.abnormal_closes,
            script_errors: c.ws_errors,
            failed_connect_reasons: connect_error_reasons.clone(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report holding `samples` (µs), as the extension would write it.
    fn report(samples: &[u64], received: u64) -> NativeReport {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for &s in samples {
            h.record(s).unwrap();
        }
        let buckets = h
            .iter_recorded()
            .map(|v| {
                [
                    h.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                ]
            })
            .collect();
        NativeReport {
            format: FORMAT.into(),
            instance: "test".into(),
            process_cpu_ns: 1_000,
            counters: NativeCounters {
                chat_received: received,
                ..NativeCounters::default()
            },
            latency_us: LatencyBuckets {
                lowest_trackable_us: 1,
                highest_trackable_us: 60_000_000,
                significant_figures: 3,
                buckets,
            },
            response_time_us: None,
            pong_latency_us: None,
            missed_chat_weight: None,
            instance_id: 0,
            cross_instance_latency_us: None,
            period_ms: 0,
            periods: Vec::new(),
            steps: Vec::new(),
            negotiated: Vec::new(),
            connect_error_reasons: Default::default(),
            latency_probe_every: 10,
            slow: None,
        }
    }

    #[test]
    fn cross_instance_latency_merges_apart_from_own_latency() {
        let mut a = report(&[100, 200], 2);
        let mut b = report(&[300], 1);
        a.cross_instance_latency_us = Some(report(&[5_000], 0).latency_us);
        b.cross_instance_latency_us = Some(report(&[7_000, 9_000], 0).latency_us);
        let merged = merge(&[a, b.clone()]).unwrap();
        assert_eq!(merged.latency.len(), 3, "own latencies only");
        assert_eq!(merged.cross_latency.len(), 3);
        let cross = merged.cross_latency_ms().unwrap();
        assert!((cross.max_ms - 9.0).abs() < 0.01, "{}", cross.max_ms);
        assert!(merged.latency_ms().max_ms < 1.0);
        // Without a cross histogram (one instance, or an older report) there is no figure.
        b.cross_instance_latency_us = None;
        assert!(merge(&[b]).unwrap().cross_latency_ms().is_none());
    }

    #[test]
    fn merging_two_instances_equals_one_histogram_of_all_samples() {
        // A deterministic spread from 50 µs to ~2 s, split unevenly over two instances.
        let samples: Vec<u64> = (0..20_000u64)
            .map(|i| 50 + (i * i * 7919) % 2_000_000)
            .collect();
        let (a, b) = samples.split_at(6_000);
        let merged = merge(&[report(a, 6), report(b, 14)]).unwrap();
        let whole = merge(&[report(&samples, 20)]).unwrap();
        assert_eq!(merged.latency, whole.latency);
        assert_eq!(merged.latency_ms(), whole.latency_ms());
        assert_eq!(merged.counters.chat_received, 20);
        assert_eq!(merged.process_cpu_ns, 2_000);
        assert_eq!(merged.latency_ms().count, Some(20_000));
    }

    #[test]
    fn percentiles_come_from_the_histogram_within_its_precision() {
        let samples: Vec<u64> = (1..=1000).map(|i| i * 1000).collect(); // 1..1000 ms
        let latency = merge(&[report(&samples, 0)]).unwrap().latency_ms();
        assert!((latency.p50_ms - 500.0).abs() <= 0.5, "{}", latency.p50_ms);
        assert!((latency.p99_ms - 990.0).abs() <= 1.0, "{}", latency.p99_ms);
        assert!((latency.max_ms - 1000.0).abs() <= 1.0, "{}", latency.max_ms);
        assert_eq!(latency.curve.first().unwrap()[0], 0.0);
        assert_eq!(latency.curve.last().unwrap()[0], 100.0);
    }

    #[test]
    fn reports_of_another_format_or_settings_are_refused() {
        let mut other = report(&[10], 0);
        other.latency_us.significant_figures = 2;
        assert!(matches!(
            merge(&[report(&[10], 0), other]),
            Err(NativeError::Settings)
        ));
        assert!(matches!(
            NativeReport::from_json(
                r#"{"format":"x","counters":{},"latency_us":{"lowest_trackable_us":1,"highest_trackable_us":2,"significant_figures":3}}"#
            ),
            Err(NativeError::Format { .. })
        ));
    }

    #[test]
    fn the_result_says_one_client_in_how_many_timed_chats_and_older_reports_mean_every_client() {
        let (k6, _) = merge(&[report(&[100], 1), report(&[200], 1)])
            .unwrap()
            .k6_metrics(1.0);
        assert_eq!(k6.latency_probe_every, 10);
        let older = NativeReport::from_json(&format!(
            r#"{{"format":"{FORMAT}","counters":{{}},"latency_us":{{"lowest_trackable_us":1,"highest_trackable_us":60000000,"significant_figures":3,"buckets":[]}}}}"#
        ))
        .unwrap();
        assert_eq!(older.latency_probe_every, 1);
    }

    /// A period of an older report: service time only, counters without the chat causes.
    const OLDER_WINDOW: &str = r#"{"from_ms":10000,"to_ms":20000,
        "counters":{"chat_sent":3,"chat_received":6},
        "latency_us":{"lowest_trackable_us":1,"highest_trackable_us":60000000,
                      "significant_figures":3,"total_count":2,"buckets":[[400,1],[900,1]]}}"#;

    #[test]
    fn an_older_report_reads_as_every_chat_intended_sent_on_time_and_response_time_service_time() {
        let older = NativeReport::from_json(&format!(
            r#"{{"format":"{FORMAT}","instance":"vm","process_cpu_ns":46869000,
                "counters":{{"sessions":2,"chat_sent":5,"chat_received":10,"msgs_sent":9}},
                "latency_us":{{"lowest_trackable_us":1,"highest_trackable_us":60000000,
                              "significant_figures":3,"total_count":2,"buckets":[[400,1],[900,1]]}},
                "period_ms":10000,"periods":[{OLDER_WINDOW}],"steps":[]}}"#
        ))
        .unwrap();
        let c = older.counters;
        assert_eq!((c.chats_intended, c.chats_sent_on_time), (5, 5));
        assert_eq!((c.chats_sent_late(), c.chats_missed()), (0, 0));
        assert_eq!(c.sent_per_intended(), Some(1.0));
        assert_eq!(c.timer_late_share(), Some(0.0));
        assert!(older.response_time_us.is_none() && older.missed_chat_weight.is_none());
        assert_eq!(older.periods[0].counters.chats_intended, 3);

        let merged = merge(&[older]).unwrap();
        assert_eq!(merged.response_time_us, merged.latency);
        assert_eq!(merged.response_time_ms(), merged.latency_ms());
        assert_eq!(
            merged.periods[0].response_time_us,
            merged.periods[0].latency
        );
        assert_eq!(merged.periods[0].response_time_us.len(), 2);
    }

    #[test]
    fn response_time_and_the_chat_counters_by_cause_merge_with_an_older_report() {
        let mut newer = report(&[500, 700], 2);
        // Two chats held 2 s by the server, one of them missed (weight 1).
        newer.response_time_us = Some(report(&[2_000_500, 700, 2_000_000], 0).latency_us);
        newer.missed_chat_weight = Some(1.0);
        newer.counters = NativeCounters::from(
            serde_json::from_str::<RawCounters>(
                r#"{"chat_sent":2,"chats_intended":3,"chats_sent_on_time":1,
                    "chats_sent_late_write":1,"chats_missed_write":1}"#,
            )
            .unwrap(),
        );
        let older = report(&[300], 1);
        let merged = merge(&[newer, older]).unwrap();
        assert_eq!(merged.latency.len(), 3);
        assert_eq!(
            merged.response_time_us.len(),
            4,
            "newer's 3 and older's service time"
        );
        assert!(merged.response_time_ms().max_ms > 1_999.0);
        assert!(merged.latency_ms().max_ms < 1.0);
        let c = merged.counters;
        // The older report's one chat sent was intended and on time.
        assert_eq!((c.chats_intended, c.chats_sent_on_time), (3, 1));
        assert_eq!((c.chats_sent_late_write, c.chats_missed_write), (1, 1));
        assert_eq!(c.chats_sent_late() + c.chats_missed(), 2);
    }

    #[test]
    fn negotiations_and_connect_reasons_add_up_over_instances_and_null_reads_as_none() {
        let with = |sessions: u64| {
            let mut r = report(&[1_000], 1);
            r.negotiated = vec![NativeNegotiation {
                tls_version: "TLS 1.3".into(),
                tls_cipher_suite: "TLS_AES_128_GCM_SHA256".into(),
                deflate:
                    "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
                        .into(),
                sessions,
            }];
            r.connect_error_reasons = [("tls".to_string(), 2)].into();
            r
        };
        let merged = merge(&[with(3), with(4)]).unwrap();
        assert_eq!(merged.negotiated.len(), 1);
        let n = &merged.negotiated[0];
        assert_eq!(n.sessions, 7);
        assert_eq!(n.tls_version.as_deref(), Some("TLS 1.3"));
        let deflate = n.deflate.as_ref().expect("deflate parsed");
        assert!(deflate.server_no_context_takeover && deflate.client_no_context_takeover);
        assert_eq!(merged.connect_error_reasons["tls"], 4);
        let (_, errors) = merged.k6_metrics(1.0);
        assert_eq!(errors.failed_connect_reasons["tls"], 4);

        let go_nil = format!(
            r#"{{"format":"{FORMAT}","counters":{{}},"latency_us":{{"lowest_trackable_us":1,"highest_trackable_us":60000000,"significant_figures":3,"buckets":[]}},"negotiated":null,"connect_error_reasons":null}}"#
        );
        let read = NativeReport::from_json(&go_nil).unwrap();
        assert!(read.negotiated.is_empty() && read.connect_error_reasons.is_empty());
    }

    #[test]
    fn slow_clients_add_up_over_instances_on_one_clock_and_older_reports_have_none() {
        let empty_histogram = r#""latency_us":{"lowest_trackable_us":1,"highest_trackable_us":60000000,"significant_figures":3,"buckets":[]}"#;
        let with_slow = |slow: &str| {
            NativeReport::from_json(&format!(
                r#"{{"format":"{FORMAT}","counters":{{}},{empty_histogram},"slow":{slow}}}"#
            ))
            .unwrap()
        };
        let a = with_slow(
            r#"{"clients":3,"received":100,"closed_by_server":2,"closed_at_ms":[15234,15240],"errors":0,"read_paused_ms":15000,"start_ms":1000000}"#,
        );
        let b = with_slow(
            r#"{"clients":2,"received":50,"closed_by_server":1,"closed_at_ms":[15000],"errors":1,"read_paused_ms":14000,"start_ms":1000100}"#,
        );
        let merged = merge(&[a, b]).unwrap().slow.unwrap();
        assert_eq!(
            merged,
            MergedSlow {
                clients: 5,
                received: 150,
                closed_by_server: 3,
                closed_at_epoch_ms: vec![1_015_100, 1_015_234, 1_015_240],
                errors: 1,
                read_paused_ms: 15000,
                started_epoch_ms: Some(1_000_000),
            }
        );
        // null, a missing object and a missing field all read as nothing there.
        assert!(merge(&[with_slow("null")]).unwrap().slow.is_none());
        assert!(merge(&[report(&[1], 1)]).unwrap().slow.is_none());
        let partial = with_slow(r#"{"clients":4,"closed_at_ms":null}"#);
        assert_eq!(partial.slow.unwrap().clients, 4);
    }
}
