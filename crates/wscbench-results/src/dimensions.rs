//! The dimensions that name one measured point: scenario, mode, load path, variant, load
//! parameters and repetition, and the file layout that follows from them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Defines a string-named enum with `ALL`, `as_str`, `Display` and `FromStr`, so that the
/// CLI, the runner, the JSON and the reports share one list of names.
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in the order runs and reports take them.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The name used in JSON, file names, the CLI and k6's environment.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, UnknownName> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(UnknownName {
                        what: $what,
                        found: other.to_string(),
                        known: vec![$($text,)+],
                    }),
                }
            }
        }
    };
}

/// A name that is not one of a dimension's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {found:?}; the {what}s are {}", known.join(", "))]
pub struct UnknownName {
    /// Which dimension.
    pub what: &'static str,
    /// What was given.
    pub found: String,
    /// The names it could have been.
    pub known: Vec<&'static str>,
}

named_enum!(
    /// A load shape (`scenarios/<name>.js`).
    Scenario, "scenario" {
        /// Constant clients chatting at a steady rate: the one shape every server should hold.
        Steady => "steady",
        /// A join storm: many clients arrive within seconds, chat once, leave.
        Burst => "burst",
        /// Clients that join, chat once and leave every few seconds, for a minute.
        Churn => "churn",
        /// More clients and more chats, step by step, until something gives.
        Saturation => "saturation",
        /// Steps of clients chatting at a room's pace, in one run, until latency p95 passes
        /// the target: the most clients a server holds at it.
        Capacity => "capacity",
        /// Steps of joined clients that never chat, until the server's memory nears its limit
        /// or connects fail: idle clients held and bytes per client.
        IdleCapacity => "idle-capacity",
        /// Clients split into rooms of `room-size`, the deliveries asked per second the same
        /// for every room size: what a room's size costs a server.
        Fanout => "fanout",
        /// One room in which a share of the clients stop reading for a while, then read
        /// again: what slow readers cost the healthy ones, and how fast the server recovers.
        SlowConsumers => "slow-consumers",
        /// One room chatting at a fixed, open-loop rate of deliveries per second, one step of
        /// offered load per point (the `deliveries` load parameter): what a delivery costs and
        /// how late it arrives at a load the server carries, up to where it stops carrying it.
        LoadCurve => "load-curve",
        /// Users in rooms of 50 that ping every 25 s, chat once a minute and churn 1 % a
        /// minute, brought up in three levels inside one point: what a connected user costs in
        /// memory (the slope across the levels) and CPU.
        Population => "population",
    }
);

impl Scenario {
    /// The scenarios `wscbench run` runs when none is named: the population (what a connected
    /// user costs), the load curve (cost and latency at loads the machine can answer) and the
    /// seed's burst and churn. Steady runs when named: its one headline, the peak memory of
    /// 100 clients, is what the population's memory per user measures properly, and its
    /// constant rate is the load curve's lowest step. Saturation runs when named: on this
    /// machine kind k6 is its limit for half its servers or more (3 of 6 load-generator
    /// bound in every round of run 20261128-093342, 4 of 6 in 20261128-101730, not kept), so
    /// its rounds decide little, while the curve's
    /// capacity answers how much a server carries with an interval; the 30-minute rounds
    /// spend its time on the curve's rounds.
    /// Capacity and idle capacity run until the server breaks, and fan-out and slow consumers
    /// study one property each, so they run only when asked for.
    pub const DEFAULT: &'static [Scenario] = &[
        Scenario::Population,
        Scenario::LoadCurve,
        Scenario::Burst,
        Scenario::Churn,
    ];

    /// True for the shapes only the native load path (k6/x/chat) runs: rooms, steps with
    /// their own histograms, slow readers.
    pub fn native_only(self) -> bool {
        matches!(
            self,
            Scenario::Capacity
                | Scenario::Fanout
                | Scenario::SlowConsumers
                | Scenario::LoadCurve
                | Scenario::Population
        )
    }
}

/// The fan-out scenario's room size when no sweep sets one, in every mode
/// (`scenarios/lib/modes.js`).
pub const FANOUT_DEFAULT_ROOM_SIZE: u64 = 10;

named_enum!(
    /// How long the scenarios run (`scenarios/lib/modes.js`).
    Mode, "mode" {
        /// Every scenario in 10 s or less with a tenth of the clients: tests and CI.
        Smoke => "smoke",
        /// The benchmark's default: the seed's shapes with short holds, run in rounds.
        Quick => "quick",
        /// The seed's exact lengths (one long pass per point).
        Seed => "seed",
        /// Longer holds where length changes what is measured.
        Soak => "soak",
    }
);

named_enum!(
    /// How the clients reached the server.
    Transport, "transport" {
        /// Cleartext WebSocket.
        Ws => "ws",
        /// WebSocket over TLS.
        Wss => "wss",
        /// Cleartext, permessage-deflate negotiated.
        #[serde(rename = "ws+deflate")]
        WsDeflate => "ws+deflate",
        /// TLS, permessage-deflate negotiated.
        #[serde(rename = "wss+deflate")]
        WssDeflate => "wss+deflate",
    }
);

impl Default for Transport {
    /// Results written before the transport was recorded were all cleartext.
    fn default() -> Self {
        Transport::Ws
    }
}

impl Transport {
    /// True for plain `ws` (not written to result files, which read back as `ws`).
    pub fn is_ws(&self) -> bool {
        *self == Transport::Ws
    }

    /// True for the transports over TLS (`wss`, `wss+deflate`).
    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Wss | Transport::WssDeflate)
    }

    /// True for the transports that negotiate permessage-deflate.
    pub fn is_deflate(&self) -> bool {
        matches!(self, Transport::WsDeflate | Transport::WssDeflate)
    }
}

named_enum!(
    /// Which client loop drove the server.
    LoadPath, "load path" {
        /// The k6 extension `k6/x/chat`: Go clients, aggregated metrics, an HDR histogram.
        Native => "native",
        /// k6's JavaScript `k6/websockets` client: one JS callback and one sample per message.
        Js => "js",
    }
);

impl Default for LoadPath {
    /// Results written before the native path existed were all driven by the js path.
    fn default() -> Self {
        LoadPath::Js
    }
}

/// A load parameter: a knob of a scenario's shape that a sweep sets (`--sweep KEY=V1,V2`),
/// passed to k6 as its environment variable ([`LoadParam::env_name`]). A result's
/// `load_params` and `run.json`'s `sweep` are keyed by its name ([`LoadParam::as_str`]), and
/// keys order by that name, so file names and JSON read as they did when keys were text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LoadParam {
    /// The clients the shape holds (at once, or over its length for churn).
    #[serde(rename = "clients")]
    Clients,
    /// The chats per second each client sends.
    #[serde(rename = "rate")]
    Rate,
    /// The clients of each room.
    #[serde(rename = "room-size")]
    RoomSize,
    /// The share of slow-consumers' clients that are slow.
    #[serde(rename = "slow-share")]
    SlowShare,
    /// The deliveries per second a load-curve step offers.
    #[serde(rename = "deliveries")]
    Deliveries,
    /// The users of a population's full level.
    #[serde(rename = "users")]
    Users,
    /// The seconds between one user's pings.
    #[serde(rename = "ping-s")]
    PingS,
    /// The seconds between one user's chats.
    #[serde(rename = "chat-s")]
    ChatS,
    /// The percent of users leaving and joining again a minute.
    #[serde(rename = "churn")]
    Churn,
}

/// A point's load parameters: those that override its shape's defaults.
pub type LoadParams = BTreeMap<LoadParam, f64>;

impl LoadParam {
    /// Every parameter, in the order errors list them (`LOAD_PARAMS` in
    /// `scenarios/lib/modes.js`).
    pub const ALL: [LoadParam; 9] = [
        LoadParam::Clients,
        LoadParam::Rate,
        LoadParam::RoomSize,
        LoadParam::SlowShare,
        LoadParam::Deliveries,
        LoadParam::Users,
        LoadParam::PingS,
        LoadParam::ChatS,
        LoadParam::Churn,
    ];

    /// Its name in `--sweep`, JSON and file names, e.g. `room-size`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadParam::Clients => "clients",
            LoadParam::Rate => "rate",
            LoadParam::RoomSize => "room-size",
            LoadParam::SlowShare => "slow-share",
            LoadParam::Deliveries => "deliveries",
            LoadParam::Users => "users",
            LoadParam::PingS => "ping-s",
            LoadParam::ChatS => "chat-s",
            LoadParam::Churn => "churn",
        }
    }

    /// The environment variable k6 reads it from: its name in upper case, `-` → `_`.
    pub fn env_name(self) -> &'static str {
        match self {
            LoadParam::Clients => "CLIENTS",
            LoadParam::Rate => "RATE",
            LoadParam::RoomSize => "ROOM_SIZE",
            LoadParam::SlowShare => "SLOW_SHARE",
            LoadParam::Deliveries => "DELIVERIES",
            LoadParam::Users => "USERS",
            LoadParam::PingS => "PING_S",
            LoadParam::ChatS => "CHAT_S",
            LoadParam::Churn => "CHURN",
        }
    }

    /// What one of its values counts, e.g. `chats/s per client`.
    pub fn unit(self) -> &'static str {
        match self {
            LoadParam::Clients => "clients",
            LoadParam::Rate => "chats/s per client",
            LoadParam::RoomSize => "clients per room",
            LoadParam::SlowShare => "share of the clients",
            LoadParam::Deliveries => "deliveries/s",
            LoadParam::Users => "users",
            LoadParam::PingS | LoadParam::ChatS => "s",
            LoadParam::Churn => "% of the users a minute",
        }
    }

    /// True when its values are whole counts (of clients, of users).
    pub fn is_count(self) -> bool {
        matches!(
            self,
            LoadParam::Clients | LoadParam::RoomSize | LoadParam::Users
        )
    }

    /// The scenarios that take it ([`Scenario::load_params`]).
    pub fn scenarios(self) -> impl Iterator<Item = Scenario> {
        Scenario::ALL
            .iter()
            .copied()
            .filter(move |s| s.load_params().contains(&self))
    }
}

impl Scenario {
    /// The load parameters this scenario takes (`SWEEP_KEYS` in `scenarios/lib/modes.js`).
    /// A burst's clients chat once and a churn client once per stay, so only the shapes that
    /// chat at a rate take `rate`.
    pub fn load_params(self) -> &'static [LoadParam] {
        use LoadParam::*;
        match self {
            Scenario::Steady | Scenario::Saturation => &[Clients, Rate],
            Scenario::Burst | Scenario::Churn => &[Clients],
            // Stepped by design: their steps are the knob.
            Scenario::Capacity | Scenario::IdleCapacity => &[],
            // Its chat rate follows from the room size: the deliveries asked are fixed.
            Scenario::Fanout => &[Clients, RoomSize],
            Scenario::SlowConsumers => &[Clients, SlowShare],
            // Its steps are `deliveries` values: the curve's own when no sweep gives them.
            Scenario::LoadCurve => &[Deliveries, Clients, RoomSize],
            Scenario::Population => &[Users, RoomSize, PingS, ChatS, Churn],
        }
    }
}

/// Keys order by name, as they did when they were text.
impl Ord for LoadParam {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for LoadParam {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for LoadParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for LoadParam {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        LoadParam::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownName {
                what: "load parameter",
                found: s.to_string(),
                known: LoadParam::ALL.iter().map(|p| p.as_str()).collect(),
            })
    }
}

named_enum!(
    /// A server's language, in the order rows, charts and `--lang` take them: the profiles'
    /// three, then the extra group's runtimes. A language not listed (an external server has
    /// none) comes after, by name ([`Language::rank`]).
    Language, "language" {
        /// Go.
        Go => "go",
        /// Rust.
        Rust => "rust",
        /// Zig.
        Zig => "zig",
        /// JavaScript (servers/extra, on Node.js).
        Javascript => "javascript",
        /// Python (servers/extra).
        Python => "python",
    }
);

impl Language {
    /// A language's place among rows, by its name as results record it: its place in
    /// [`Language::ALL`], else after them all, then by name.
    pub fn rank(name: &str) -> (usize, &str) {
        let known = Language::ALL.iter().position(|l| l.as_str() == name);
        (known.unwrap_or(Language::ALL.len()), name)
    }
}

/// Which of a point's repetitions a result is (`wscbench run --runs N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Repetition {
    /// 1-based index of this repetition.
    pub index: u32,
    /// How many repetitions the run planned.
    pub of: u32,
}

impl Default for Repetition {
    fn default() -> Self {
        Repetition { index: 1, of: 1 }
    }
}

/// Everything that names one measured point besides the run it belongs to. Two results are
/// "like with like" when their keys are equal but for the dimension being compared.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointKey {
    /// Manifest id, e.g. `profile-b/go`.
    pub server: String,
    /// Named server variant, if any.
    pub variant: Option<String>,
    /// The load shape.
    pub scenario: Scenario,
    /// Load parameters that override the shape's defaults, each with its value as text.
    pub load_params: Vec<(LoadParam, String)>,
    /// How the clients reached the server: results of two transports are never like with
    /// like.
    pub transport: Transport,
}

impl PointKey {
    /// `profile-b/go`, or `profile-b/go@gomaxprocs-1` for a variant.
    pub fn server_label(&self) -> String {
        server_label(&self.server, self.variant.as_deref())
    }
}

/// `profile-b/go`, or `profile-b/go@gomaxprocs-1` for a variant.
pub fn server_label(server: &str, variant: Option<&str>) -> String {
    match variant {
        Some(v) => format!("{server}@{v}"),
        None => server.to_string(),
    }
}

/// Load parameters (sweep values) as sorted `key=value` pairs; numbers print without a
/// trailing `.0`.
pub fn params_text(params: &LoadParams) -> Vec<(LoadParam, String)> {
    params
        .iter()
        .map(|(k, v)| (*k, format_number(*v)))
        .collect()
}

/// A load parameter's value as file names and tables write it: without a trailing `.0`.
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The name of the per-run manifest file in each run directory.
pub const RUN_MANIFEST_FILE: &str = "run.json";
/// The folder, inside a run directory, that holds the load generator's raw output.
pub const RAW_DIR: &str = "raw";
/// The self-contained HTML report written at the end of every run.
pub const HTML_REPORT_FILE: &str = "report.html";

/// Where a result lives inside its run directory:
/// `<profile>/<lang>[@variant]/<scenario>[+key=value...][.transport][.rep-N].json`.
/// The transport appears only when it is not `ws`, the repetition suffix only when a run
/// has more than one.
pub fn result_relative_path(
    server: &str,
    variant: Option<&str>,
    scenario: Scenario,
    load_params: &LoadParams,
    transport: Transport,
    repetition: Repetition,
) -> PathBuf {
    let stem = point_stem(scenario, load_params, transport, repetition);
    PathBuf::from(server_label(server, variant)).join(format!("{stem}.json"))
}

/// Where the load generator's raw output for a result goes, relative to its run directory.
pub fn raw_relative_dir(
    server: &str,
    variant: Option<&str>,
    scenario: Scenario,
    load_params: &LoadParams,
    transport: Transport,
    repetition: Repetition,
) -> PathBuf {
    // The result's own path without its `.json`: one layout for both.
    let result = result_relative_path(
        server,
        variant,
        scenario,
        load_params,
        transport,
        repetition,
    );
    PathBuf::from(RAW_DIR).join(result.with_extension(""))
}

fn point_stem(
    scenario: Scenario,
    load_params: &LoadParams,
    transport: Transport,
    repetition: Repetition,
) -> String {
    let mut stem = scenario.as_str().to_string();
    for (k, v) in params_text(load_params) {
        stem.push_str(&format!("+{k}={v}"));
    }
    if !transport.is_ws() {
        stem.push_str(&format!(".{transport}"));
    }
    if repetition.of > 1 {
        stem.push_str(&format!(".rep-{}", repetition.index));
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for s in Scenario::ALL {
            assert_eq!(s.as_str().parse::<Scenario>().unwrap(), *s);
        }
        let err = "stedy".parse::<Scenario>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown scenario \"stedy\"; the scenarios are steady, burst, churn, saturation, capacity, idle-capacity, fanout, slow-consumers, load-curve, population"
        );
        assert_eq!("js".parse::<LoadPath>().unwrap(), LoadPath::Js);
    }

    #[test]
    fn load_parameters_read_and_order_by_their_names_and_name_their_environment_variables() {
        for p in LoadParam::ALL {
            assert_eq!(p.as_str().parse::<LoadParam>().unwrap(), p);
            assert_eq!(p.env_name(), p.as_str().to_uppercase().replace('-', "_"));
            let json = serde_json::to_string(&BTreeMap::from([(p, 1.0)])).unwrap();
            assert_eq!(json, format!("{{\"{p}\":1.0}}"));
        }
        let mut by_name = LoadParam::ALL;
        by_name.sort();
        let names: Vec<&str> = by_name.iter().map(|p| p.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(
            LoadParam::RoomSize.scenarios().collect::<Vec<_>>(),
            [Scenario::Fanout, Scenario::LoadCurve, Scenario::Population]
        );
        assert!("room_size".parse::<LoadParam>().is_err());
    }

    #[test]
    fn languages_rank_in_their_order_and_unknown_ones_after_by_name() {
        assert!(Language::rank("go") < Language::rank("zig"));
        assert!(Language::rank("python") < Language::rank("elixir"));
        assert_eq!(Language::rank(""), (Language::ALL.len(), ""));
    }

    #[test]
    fn result_paths_carry_variant_params_and_repetition() {
        let none = BTreeMap::new();
        assert_eq!(
            result_relative_path(
                "profile-b/go",
                None,
                Scenario::Steady,
                &none,
                Transport::Ws,
                Repetition::default()
            ),
            PathBuf::from("profile-b/go/steady.json")
        );
        let params = BTreeMap::from([(LoadParam::Clients, 500.0), (LoadParam::Rate, 2.5)]);
        assert_eq!(
            result_relative_path(
                "profile-b/go",
                Some("gomaxprocs-1"),
                Scenario::Saturation,
                &params,
                Transport::WssDeflate,
                Repetition { index: 2, of: 5 }
            ),
            PathBuf::from(
                "profile-b/go@gomaxprocs-1/saturation+clients=500+rate=2.5.wss+deflate.rep-2.json"
            )
        );
    }
}
