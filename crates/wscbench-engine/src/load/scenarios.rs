//! The scenario set as the runner plans it: how long each shape runs in each mode, what
//! values each load parameter accepts (which shape takes which is
//! [`Scenario::load_params`]), and the shapes of fan-out and slow consumers, whose figures are
//! derived from their phases and room sizes. All are those of `scenarios/lib/modes.js`
//! (tests read that file under node and check them, the load parameters included).

use std::collections::BTreeMap;

use wscbench_results::{LoadParam, LoadParams, Mode, Scenario};

/// [`seconds`], with soak's length set by `wscbench run --duration` (`DURATION` in k6's
/// environment) for the shapes that have one (steady's hold, churn's duration).
pub fn planned_seconds(scenario: Scenario, mode: Mode, soak_seconds: Option<u64>) -> u64 {
    point_seconds(scenario, mode, soak_seconds, &BTreeMap::new())
}

/// [`planned_seconds`] of one point, whose load parameters may change its length: the
/// population's `users` set how long its levels take to connect.
pub fn point_seconds(
    scenario: Scenario,
    mode: Mode,
    soak_seconds: Option<u64>,
    params: &LoadParams,
) -> u64 {
    match (scenario, mode, soak_seconds) {
        (Scenario::Population, _, _) => PopulationShape::with_params(mode, params).seconds(),
        (Scenario::Steady | Scenario::Churn, Mode::Soak, Some(s)) => s,
        _ => seconds(scenario, mode),
    }
}

/// True when `--duration` changes this scenario's length.
pub fn has_soak_length(scenario: Scenario) -> bool {
    matches!(scenario, Scenario::Steady | Scenario::Churn)
}

/// The clients of each idle-capacity step in `mode` (`idle-capacity` in
/// `scenarios/lib/modes.js`; a test below checks them): what the host limits are planned for.
pub fn idle_capacity_steps(mode: Mode) -> &'static [u64] {
    match mode {
        Mode::Smoke => &[1_000, 2_000, 3_000],
        _ => &[10_000, 25_000, 50_000, 100_000, 150_000, 200_000],
    }
}

/// How long a scenario's k6 executor runs, in seconds, before k6's graceful stop: used for
/// progress and for the time-out after which k6 is stopped. Soak lengthens only the shapes
/// whose length changes what is measured. Capacity's is its longest: every step held.
pub fn seconds(scenario: Scenario, mode: Mode) -> u64 {
    match (scenario, mode) {
        (Scenario::Steady, Mode::Smoke) => 5,
        (Scenario::Steady, Mode::Quick) => 5,
        (Scenario::Steady, Mode::Seed) => 60,
        (Scenario::Steady, Mode::Soak) => 300,
        (Scenario::Burst, Mode::Smoke) => 5,
        (Scenario::Burst, Mode::Quick) => 11,
        (Scenario::Burst, _) => 20,
        (Scenario::Churn, Mode::Smoke) => 5,
        (Scenario::Churn, Mode::Quick) => 7,
        (Scenario::Churn, Mode::Seed) => 60,
        (Scenario::Churn, Mode::Soak) => 180,
        (Scenario::Saturation, Mode::Smoke) => 8,
        (Scenario::Saturation, Mode::Quick) => 17,
        (Scenario::Saturation, _) => 100,
        (Scenario::Capacity, Mode::Smoke) => 18,
        (Scenario::Capacity, _) => 240,
        (Scenario::IdleCapacity, Mode::Smoke) => 12,
        (Scenario::IdleCapacity, _) => 240,
        (Scenario::Fanout, Mode::Smoke) => 8,
        (Scenario::Fanout, _) => 20,
        (Scenario::SlowConsumers, Mode::Smoke) => 10,
        (Scenario::SlowConsumers, _) => 42,
        (Scenario::LoadCurve, mode) => {
            let shape = LoadCurveShape::of(mode);
            shape.seconds(shape.steps.len())
        }
        (Scenario::Population, mode) => PopulationShape::of(mode).seconds(),
    }
}

/// The population shape (`population` in `scenarios/lib/modes.js`, levels and ramp as its
/// `populationShape` derives them): users in rooms, their heartbeats, chats and churn, and
/// the levels (a third, two thirds, all) brought up inside one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PopulationShape {
    /// Users at the full level.
    pub users: u64,
    /// Users per room.
    pub room_size: u64,
    /// Seconds between one user's pings.
    pub ping_s: f64,
    /// Seconds between one user's chats.
    pub chat_s: f64,
    /// Percent of the users that leave and join again each minute.
    pub churn_percent: f64,
    /// The most connects a second a level's ramp asks.
    pub connects_per_s: u64,
    /// Each level's measured hold, in seconds.
    pub hold_seconds: u64,
}

/// The population's levels: shares of its users.
pub const POPULATION_LEVELS: [f64; 3] = [1.0 / 3.0, 2.0 / 3.0, 1.0];

impl PopulationShape {
    /// The shape of `mode`, without load parameters.
    pub fn of(mode: Mode) -> Self {
        let (users, hold_seconds) = match mode {
            Mode::Smoke => (300, 2),
            Mode::Quick => (5_000, 3),
            Mode::Seed | Mode::Soak => (5_000, 30),
        };
        PopulationShape {
            users,
            room_size: 50,
            ping_s: 25.0,
            chat_s: 60.0,
            churn_percent: 1.0,
            connects_per_s: 2_000,
            hold_seconds,
        }
    }

    /// The shape of `mode` with a point's load parameters applied.
    pub fn with_params(mode: Mode, params: &LoadParams) -> Self {
        let mut shape = Self::of(mode);
        if let Some(&n) = params.get(&LoadParam::Users) {
            shape.users = n as u64;
        }
        if let Some(&n) = params.get(&LoadParam::RoomSize) {
            shape.room_size = n as u64;
        }
        if let Some(&s) = params.get(&LoadParam::PingS) {
            shape.ping_s = s;
        }
        if let Some(&s) = params.get(&LoadParam::ChatS) {
            shape.chat_s = s;
        }
        if let Some(&c) = params.get(&LoadParam::Churn) {
            shape.churn_percent = c;
        }
        shape
    }

    /// Each level's users, in whole rooms, every level at least a room above the one before.
    pub fn levels(&self) -> Vec<u64> {
        let room = self.room_size.max(1);
        let rooms = ((self.users as f64 / room as f64).round() as u64).max(1);
        let mut before = 0;
        POPULATION_LEVELS
            .iter()
            .map(|share| {
                let level = (before + 1).max((rooms as f64 * share).round() as u64);
                before = level;
                level.min(rooms) * room
            })
            .collect()
    }

    /// Each level's ramp, in seconds: twice what its largest level's new users take to
    /// connect, at least 2.
    pub fn ramp_seconds(&self) -> u64 {
        let levels = self.levels();
        let newest = levels
            .iter()
            .enumerate()
            .map(|(i, &n)| n - if i == 0 { 0 } else { levels[i - 1] })
            .max()
            .unwrap_or(0);
        (2 * newest.div_ceil(self.connects_per_s.max(1))).max(2)
    }

    /// The whole point's load: every level's ramp and hold.
    pub fn seconds(&self) -> u64 {
        self.levels().len() as u64 * (self.ramp_seconds() + self.hold_seconds)
    }
}

/// What a value of `key` must be, as error messages say it.
pub fn requirement(key: LoadParam) -> &'static str {
    match key {
        LoadParam::RoomSize => "a whole number of at least 2",
        LoadParam::SlowShare => "a fraction between 0 and 1 (both excluded)",
        LoadParam::Churn => "a percentage from 0 to 100",
        LoadParam::PingS | LoadParam::ChatS => "a positive number of seconds",
        key if key.is_count() => "a positive whole number",
        _ => "a positive number",
    }
}

/// True when `value` is one [`requirement`] allows for `key`.
pub fn accepts(key: LoadParam, value: f64) -> bool {
    if key == LoadParam::Churn {
        return (0.0..=100.0).contains(&value);
    }
    value.is_finite()
        && value > 0.0
        && (!key.is_count() || value.fract() == 0.0)
        && match key {
            LoadParam::RoomSize => value >= 2.0,
            LoadParam::SlowShare => value < 1.0,
            _ => true,
        }
}

/// The fan-out shape (`fanout` in `scenarios/lib/modes.js`): `clients` split into rooms of
/// `room_size`, each client chatting `deliveries_per_second / (clients · (room_size − 1))`
/// times a second, so the deliveries asked are the same for every room size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FanoutShape {
    /// Clients in all.
    pub clients: u64,
    /// Clients per room.
    pub room_size: u64,
    /// Deliveries asked of the server per second, for every room size.
    pub deliveries_per_second: f64,
    /// Seconds over which the rooms connect.
    pub ramp_seconds: u64,
    /// Seconds the rooms are held, chatting.
    pub hold_seconds: u64,
}

impl FanoutShape {
    /// The shape in `mode` (soak and seed are quick's).
    pub fn of(mode: Mode) -> FanoutShape {
        match mode {
            Mode::Smoke => FanoutShape {
                clients: 100,
                room_size: wscbench_results::dimensions::FANOUT_DEFAULT_ROOM_SIZE,
                deliveries_per_second: 800.0,
                ramp_seconds: 2,
                hold_seconds: 6,
            },
            _ => FanoutShape {
                clients: 1000,
                room_size: wscbench_results::dimensions::FANOUT_DEFAULT_ROOM_SIZE,
                deliveries_per_second: 8000.0,
                ramp_seconds: 5,
                hold_seconds: 15,
            },
        }
    }

    /// The rooms the clients fill: `floor(clients / room_size)`.
    pub fn rooms(&self) -> u64 {
        self.clients / self.room_size.max(1)
    }

    /// The chats per second each client sends.
    pub fn chats_per_client_s(&self) -> f64 {
        self.deliveries_per_second / (self.clients as f64 * (self.room_size as f64 - 1.0))
    }
}

/// The load-curve shape (`load-curve` in `scenarios/lib/modes.js`): `clients` in rooms of
/// `room_size` (one room by default), offered each of its levels of deliveries per second in
/// turn inside one point: one join ramp, then per level a rate change that settles and a
/// measured hold ([`LoadCurveShape::levels`]). A level is the fan-out shape at its deliveries
/// ([`LoadCurveShape::at`]): each client chats `deliveries / (clients · (room_size − 1))`
/// times a second on an open-loop schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadCurveShape {
    /// Clients in all.
    pub clients: u64,
    /// Clients per room.
    pub room_size: u64,
    /// The offered deliveries per second of each level, rising: the levels the curve runs
    /// when no `--sweep deliveries=` gives others.
    pub steps: Vec<f64>,
    /// Seconds over which the rooms connect, once per point.
    pub ramp_seconds: u64,
    /// Seconds from a level's rate change to its hold.
    pub settle_seconds: u64,
    /// Seconds each level is held, chatting, and measured.
    pub hold_seconds: u64,
}

/// The quiet second after the last level's hold, before the clients leave
/// (`QUIET_BEFORE_LEAVE_MS` in `scenarios/lib/chat.js`).
pub const CURVE_QUIET_SECONDS: u64 = 1;

/// One level of a load curve inside its point, in ms from the scenario's start: the rate
/// changes at `start_ms`, the hold is measured over `[hold_from_ms, to_ms)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurveLevel {
    /// The deliveries per second offered.
    pub deliveries_per_s: f64,
    /// When its rate begins.
    pub start_ms: u64,
    /// When its measured hold begins.
    pub hold_from_ms: u64,
    /// When its hold (and the level) ends.
    pub to_ms: u64,
}

impl LoadCurveShape {
    /// The shape in `mode` (soak and seed are quick's). Levels and holds are chosen from
    /// measurements (docs/methodology.md, "The load curve").
    pub fn of(mode: Mode) -> LoadCurveShape {
        match mode {
            Mode::Smoke => LoadCurveShape {
                clients: 50,
                room_size: 50,
                steps: vec![2_450.0, 9_800.0],
                ramp_seconds: 2,
                settle_seconds: 1,
                hold_seconds: 2,
            },
            _ => LoadCurveShape {
                clients: 500,
                room_size: 500,
                steps: vec![50_000.0, 100_000.0, 200_000.0, 400_000.0],
                ramp_seconds: 2,
                settle_seconds: 1,
                hold_seconds: 3,
            },
        }
    }

    /// The shape in `mode` with a point's load parameters (`clients`, `room-size`; a room
    /// size given without clients sizes the clients to one room of it only when the default
    /// is one room) applied.
    pub fn with_params(mode: Mode, params: &LoadParams) -> LoadCurveShape {
        let mut shape = LoadCurveShape::of(mode);
        let one_room = shape.room_size == shape.clients;
        if let Some(&n) = params.get(&LoadParam::Clients) {
            shape.clients = n as u64;
            if one_room && !params.contains_key(&LoadParam::RoomSize) {
                shape.room_size = shape.clients;
            }
        }
        if let Some(&s) = params.get(&LoadParam::RoomSize) {
            shape.room_size = s as u64;
        }
        shape
    }

    /// The steps placed from what k6 was measured to receive on this host (`ceiling`,
    /// deliveries per second; `wscbench loadgen-capacity`): as many as the shape's own,
    /// spread geometrically from its first up to the ceiling (or the most the servers' rate
    /// limit lets the clients ask, if lower), the top rounded down and the others to the
    /// nearest two significant figures. A fast host's curve reaches further, and no step asks
    /// more than k6 can give. The shape's own steps when the ceiling leaves no room above
    /// twice its first step (there the run refuses the steps k6 cannot receive).
    pub fn placed_steps(&self, ceiling: f64) -> Vec<f64> {
        let own = self.steps.clone();
        let (Some(&first), n) = (own.first(), own.len()) else {
            return own;
        };
        let rate_limited = RATE_LIMIT_PER_S / self.at(1.0).chats_per_client_s();
        let top = two_figures(ceiling.min(rate_limited), f64::floor);
        if n < 2 || !top.is_finite() || top < 2.0 * first {
            return own;
        }
        let ratio = (top / first).powf(1.0 / (n - 1) as f64);
        let mut steps: Vec<f64> = (0..n)
            .map(|i| two_figures(first * ratio.powi(i as i32), f64::round))
            .collect();
        steps[0] = first;
        steps[n - 1] = top;
        if check_steps(&steps).is_ok() {
            steps
        } else {
            own
        }
    }

    /// One level: the fan-out shape at `deliveries_per_second`.
    pub fn at(&self, deliveries_per_second: f64) -> FanoutShape {
        FanoutShape {
            clients: self.clients,
            room_size: self.room_size,
            deliveries_per_second,
            ramp_seconds: self.ramp_seconds,
            hold_seconds: self.hold_seconds,
        }
    }

    /// The timeline of `levels` (deliveries per second, rising) inside one point, as
    /// `loadCurveLevels` in `scenarios/lib/modes.js` sets it.
    pub fn levels(&self, levels: &[f64]) -> Vec<CurveLevel> {
        let level_ms = (self.settle_seconds + self.hold_seconds) * 1000;
        levels
            .iter()
            .enumerate()
            .map(|(i, &deliveries_per_s)| {
                let start_ms = self.ramp_seconds * 1000 + i as u64 * level_ms;
                CurveLevel {
                    deliveries_per_s,
                    start_ms,
                    hold_from_ms: start_ms + self.settle_seconds * 1000,
                    to_ms: start_ms + level_ms,
                }
            })
            .collect()
    }

    /// How long a point of `levels` levels runs: the ramp, every level's settle and hold, a
    /// settle more of the last level's rate (chats that stop at a hold's end leave its last
    /// receipts out of its window, as no other level's do), and the quiet second before the
    /// leave.
    pub fn seconds(&self, levels: usize) -> u64 {
        self.ramp_seconds
            + levels as u64 * (self.settle_seconds + self.hold_seconds)
            + self.settle_seconds
            + CURVE_QUIET_SECONDS
    }
}

/// The slow-consumers shape (`slow-consumers` in `scenarios/lib/modes.js`): one room of
/// `clients`, of which `ceil(clients · slow_share)` are slow. After a join period come three
/// phases: baseline (everyone reads), slow (the slow clients stop reading), recovery (they
/// read again).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowConsumersShape {
    /// Clients in all, slow ones included.
    pub clients: u64,
    /// The share of them that is slow, in (0, 1).
    pub slow_share: f64,
    /// Chats per second of each healthy client.
    pub chats_per_second: f64,
    /// Seconds over which everyone joins.
    pub join_seconds: u64,
    /// Seconds in which everyone reads.
    pub baseline_seconds: u64,
    /// Seconds in which the slow clients do not read.
    pub slow_seconds: u64,
    /// Seconds after the slow clients read again.
    pub recovery_seconds: u64,
}

impl SlowConsumersShape {
    /// The shape in `mode` (soak and seed are quick's).
    pub fn of(mode: Mode) -> SlowConsumersShape {
        match mode {
            Mode::Smoke => SlowConsumersShape {
                clients: 40,
                slow_share: 0.1,
                chats_per_second: 2.0,
                join_seconds: 1,
                baseline_seconds: 3,
                slow_seconds: 3,
                recovery_seconds: 3,
            },
            _ => SlowConsumersShape {
                clients: 300,
                slow_share: 0.1,
                chats_per_second: 3.0,
                join_seconds: 2,
                baseline_seconds: 10,
                slow_seconds: 15,
                recovery_seconds: 15,
            },
        }
    }

    /// The shape in `mode` with a point's load parameters (`clients`, `slow-share`) applied.
    pub fn with_params(mode: Mode, params: &LoadParams) -> SlowConsumersShape {
        let mut shape = SlowConsumersShape::of(mode);
        if let Some(&n) = params.get(&LoadParam::Clients) {
            shape.clients = n as u64;
        }
        if let Some(&s) = params.get(&LoadParam::SlowShare) {
            shape.slow_share = s;
        }
        shape
    }

    /// How many clients are slow: `ceil(clients · slow_share)`.
    pub fn slow_clients(&self) -> u64 {
        (self.clients as f64 * self.slow_share).ceil() as u64
    }

    /// The baseline phase, in ms since the scenario's start, `[from, to)`.
    pub fn baseline_ms(&self) -> (u64, u64) {
        let from = self.join_seconds * 1000;
        (from, from + self.baseline_seconds * 1000)
    }

    /// The slow phase, in ms since the scenario's start, `[from, to)`.
    pub fn slow_ms(&self) -> (u64, u64) {
        let from = self.baseline_ms().1;
        (from, from + self.slow_seconds * 1000)
    }

    /// The recovery phase, in ms since the scenario's start, `[from, to)`.
    pub fn recovery_ms(&self) -> (u64, u64) {
        let from = self.slow_ms().1;
        (from, from + self.recovery_seconds * 1000)
    }
}

/// Why a point's load parameters cannot make its shape.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShapeError {
    /// Rooms larger than the clients.
    #[error(
        "--sweep room-size={room_size}: {scenario} in {mode} mode has {clients} clients, fewer than one room; use room sizes up to {clients} or more clients (--sweep clients=...)"
    )]
    RoomLargerThanClients {
        /// The scenario of the point.
        scenario: Scenario,
        /// The room size asked for.
        room_size: u64,
        /// The clients of the point.
        clients: u64,
        /// The mode, whose shape gave the clients when no sweep did.
        mode: Mode,
    },
    /// Rooms whose clients would have to chat over the rate limit.
    #[error(
        "{scenario} with {clients} clients in rooms of {room_size} needs {rate:.1} chats per second per client, over the servers' limit of 10; use more clients or larger rooms"
    )]
    OverRateLimit {
        /// The scenario of the point.
        scenario: Scenario,
        /// The clients of the point.
        clients: u64,
        /// Its room size.
        room_size: u64,
        /// The chats per second each client would send.
        rate: f64,
    },
    /// Load-curve steps that do not rise.
    #[error(
        "--sweep deliveries: the load curve's steps must rise, each above the one before; {value} follows {before}"
    )]
    StepsNotRising {
        /// The step before.
        before: f64,
        /// The step that is not above it.
        value: f64,
    },
}

/// The servers' rate limit: chats per second per connection (docs/protocol.md).
pub const RATE_LIMIT_PER_S: f64 = 10.0;

/// Checks that a point's load parameters make a shape that can run in `mode`: rooms no
/// larger than the clients, and within the rate limit (fan-out, and every step of a load
/// curve: the point's own, or the curve's default steps when it has none).
pub fn check_point(scenario: Scenario, mode: Mode, params: &LoadParams) -> Result<(), ShapeError> {
    let steps: Vec<FanoutShape> = match scenario {
        Scenario::Fanout => {
            let mut shape = FanoutShape::of(mode);
            if let Some(&n) = params.get(&LoadParam::Clients) {
                shape.clients = n as u64;
            }
            if let Some(&s) = params.get(&LoadParam::RoomSize) {
                shape.room_size = s as u64;
            }
            vec![shape]
        }
        Scenario::LoadCurve => {
            let curve = LoadCurveShape::with_params(mode, params);
            match params.get(&LoadParam::Deliveries) {
                Some(&d) => vec![curve.at(d)],
                None => curve.steps.iter().map(|&d| curve.at(d)).collect(),
            }
        }
        _ => return Ok(()),
    };
    for shape in steps {
        if shape.room_size > shape.clients {
            return Err(ShapeError::RoomLargerThanClients {
                scenario,
                room_size: shape.room_size,
                clients: shape.clients,
                mode,
            });
        }
        let rate = shape.chats_per_client_s();
        if rate > RATE_LIMIT_PER_S {
            return Err(ShapeError::OverRateLimit {
                scenario,
                clients: shape.clients,
                room_size: shape.room_size,
                rate,
            });
        }
    }
    Ok(())
}

/// `value` to two significant figures, `round` saying which way (`f64::floor`, `f64::round`).
fn two_figures(value: f64, round: fn(f64) -> f64) -> f64 {
    if !(value > 0.0 && value.is_finite()) {
        return value;
    }
    let unit = 10f64.powi(value.log10().floor() as i32 - 1);
    round(value / unit) * unit
}

/// Refuses load-curve steps (`--sweep deliveries=` values, in the order given) that do not
/// rise: a curve read from left to right must offer more at every step.
pub fn check_steps(steps: &[f64]) -> Result<(), ShapeError> {
    match steps.windows(2).find(|w| w[1] <= w[0]) {
        Some(w) => Err(ShapeError::StepsNotRising {
            before: w[0],
            value: w[1],
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::Path;
    use std::process::Command;

    /// The shapes of every scenario in `mode`, as `scenarios/lib/modes.js` computes them
    /// (run under node with k6's `__ENV` stubbed).
    fn shapes(mode: Mode) -> Value {
        shapes_with(mode, None)
    }

    /// The shapes in `mode` with soak's DURATION set, when given.
    fn shapes_with(mode: Mode, duration: Option<u64>) -> Value {
        node(
            &format!(
                "MODE: '{mode}', DURATION: '{}'",
                duration.map(|d| d.to_string()).unwrap_or_default()
            ),
            "console.log(JSON.stringify(Object.fromEntries(\
               ['steady', 'burst', 'churn', 'saturation', 'capacity', 'idle-capacity', 'fanout', 'slow-consumers', 'load-curve', 'population'].map((n) => [n, m.shapeOf(n)]))));",
        )
        .unwrap()
    }

    /// Runs `body` under node after importing modes.js with `env` as k6's `__ENV`, and
    /// returns what it printed as JSON.
    fn node(env: &str, body: &str) -> Result<Value, String> {
        let modes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/lib/modes.js");
        let script = format!(
            "globalThis.__ENV = {{ WS_URL: 'ws://127.0.0.1:1/ws', {env} }};\n\
             const m = await import('file://{}');\n{body}",
            modes.canonicalize().unwrap().display()
        );
        let out = Command::new("node")
            .args(["--input-type=module", "-e", &script])
            .output()
            .expect("this test needs node (installed on every machine of this project's kind)");
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    }

    #[test]
    fn the_load_parameters_of_every_scenario_match_modes_js() {
        let keys = node(
            "MODE: 'smoke'",
            "console.log(JSON.stringify({ keys: m.SWEEP_KEYS, params: m.LOAD_PARAMS }));",
        )
        .unwrap();
        assert_eq!(keys["params"], serde_json::json!(LoadParam::ALL));
        for &scenario in Scenario::ALL {
            assert_eq!(
                keys["keys"][scenario.as_str()],
                serde_json::json!(scenario.load_params()),
                "{scenario}"
            );
        }
    }

    #[test]
    fn a_sweep_value_reaches_the_shape_through_the_environment() {
        let shape = |env: &str, name: &str| {
            node(
                env,
                &format!("console.log(JSON.stringify(m.shapeOf('{name}')));"),
            )
        };
        let steady = shape("MODE: 'smoke', CLIENTS: '40', RATE: '2.5'", "steady").unwrap();
        assert_eq!(
            (
                steady["clients"].as_u64(),
                steady["chatsPerSecond"].as_f64()
            ),
            (Some(40), Some(2.5))
        );
        // Without a value, the mode's defaults.
        let plain = shape("MODE: 'smoke'", "steady").unwrap();
        assert_eq!(
            (plain["clients"].as_u64(), plain["chatsPerSecond"].as_f64()),
            (Some(10), Some(1.0))
        );
        // Saturation holds one level of clients for as long as its steps took.
        let saturation = shape("MODE: 'smoke', CLIENTS: '30'", "saturation").unwrap();
        assert_eq!(saturation["steps"], serde_json::json!([30]));
        let burst = shape("MODE: 'quick', CLIENTS: '300'", "burst").unwrap();
        assert_eq!(burst["clients"].as_u64(), Some(300));
        // A key the shape does not take, and a value that is not a positive number, stop k6.
        let err = shape("MODE: 'smoke', RATE: '2'", "burst").unwrap_err();
        assert!(err.contains("burst does not take RATE"), "{err}");
        let err = shape("MODE: 'smoke', CLIENTS: '-3'", "steady").unwrap_err();
        assert!(
            err.contains("CLIENTS must be a positive whole number"),
            "{err}"
        );
    }

    #[test]
    fn a_swept_shape_runs_as_long_as_the_plain_one() {
        for &mode in Mode::ALL {
            let swept = node(
                &format!("MODE: '{mode}', CLIENTS: '7', RATE: '3'"),
                "console.log(JSON.stringify(m.shapeOf('saturation')));",
            )
            .unwrap();
            let total = swept["rampSeconds"].as_u64().unwrap()
                * swept["steps"].as_array().unwrap().len() as u64
                + sum(&swept["holdSeconds"])
                + sum(&swept["rampDownSeconds"]);
            assert_eq!(total, seconds(Scenario::Saturation, mode), "{mode}");
        }
    }

    fn sum(v: &Value) -> u64 {
        match v {
            Value::Array(items) => items.iter().map(sum).sum(),
            other => other.as_u64().unwrap(),
        }
    }

    #[test]
    fn planned_durations_match_the_shapes_in_modes_js() {
        for &mode in Mode::ALL {
            let s = shapes(mode);
            let from_js = |scenario: Scenario| {
                let shape = &s[scenario.as_str()];
                match scenario {
                    Scenario::Steady => sum(&shape["holdSeconds"]),
                    Scenario::Burst => {
                        sum(&shape["rampUpSeconds"])
                            + sum(&shape["holdSeconds"])
                            + sum(&shape["rampDownSeconds"])
                    }
                    Scenario::Churn => sum(&shape["durationSeconds"]),
                    Scenario::Saturation => {
                        shape["steps"].as_array().unwrap().len() as u64 * sum(&shape["rampSeconds"])
                            + sum(&shape["holdSeconds"])
                            + sum(&shape["rampDownSeconds"])
                    }
                    Scenario::Capacity | Scenario::IdleCapacity | Scenario::Population => {
                        shape["steps"].as_array().unwrap().len() as u64
                            * (sum(&shape["rampSeconds"]) + sum(&shape["holdSeconds"]))
                    }
                    Scenario::Fanout => sum(&shape["rampSeconds"]) + sum(&shape["holdSeconds"]),
                    Scenario::LoadCurve => {
                        sum(&shape["rampSeconds"])
                            + shape["steps"].as_array().unwrap().len() as u64
                                * (sum(&shape["settleSeconds"]) + sum(&shape["holdSeconds"]))
                            + sum(&shape["settleSeconds"])
                            + 1
                    }
                    Scenario::SlowConsumers => {
                        sum(&shape["joinSeconds"])
                            + sum(&shape["baselineSeconds"])
                            + sum(&shape["slowSeconds"])
                            + sum(&shape["recoverySeconds"])
                    }
                }
            };
            for &scenario in Scenario::ALL {
                assert_eq!(
                    seconds(scenario, mode),
                    from_js(scenario),
                    "{scenario} in {mode}"
                );
            }
        }
    }

    #[test]
    fn the_idle_capacity_steps_are_those_of_modes_js() {
        for &mode in Mode::ALL {
            let steps: Vec<u64> = shapes(mode)["idle-capacity"]["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert_eq!(idle_capacity_steps(mode), steps, "{mode}");
        }
    }

    #[test]
    fn the_population_levels_and_ramp_are_those_of_modes_js_with_and_without_users() {
        for &mode in Mode::ALL {
            for users in [None, Some(15_000u64), Some(70)] {
                let env = format!(
                    "MODE: '{mode}', USERS: '{}'",
                    users.map(|u| u.to_string()).unwrap_or_default()
                );
                let js = node(
                    &env,
                    "console.log(JSON.stringify(m.shapeOf('population')));",
                )
                .unwrap();
                let params: LoadParams = users
                    .map(|u| (LoadParam::Users, u as f64))
                    .into_iter()
                    .collect();
                let shape = PopulationShape::with_params(mode, &params);
                let steps: Vec<u64> = js["steps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect();
                assert_eq!(shape.levels(), steps, "{mode} {users:?}");
                assert_eq!(
                    Some(shape.ramp_seconds()),
                    js["rampSeconds"].as_u64(),
                    "{mode}"
                );
                assert_eq!(
                    Some(shape.hold_seconds),
                    js["holdSeconds"].as_u64(),
                    "{mode}"
                );
                assert_eq!(Some(shape.room_size), js["roomSize"].as_u64(), "{mode}");
                assert_eq!(Some(shape.ping_s), js["pingSeconds"].as_f64(), "{mode}");
                assert_eq!(Some(shape.chat_s), js["chatSeconds"].as_f64(), "{mode}");
                assert_eq!(
                    Some(shape.churn_percent),
                    js["churnPercent"].as_f64(),
                    "{mode}"
                );
            }
        }
    }

    #[test]
    fn the_fanout_and_slow_consumers_shapes_are_those_of_modes_js() {
        for &mode in Mode::ALL {
            let s = shapes(mode);
            let fanout = FanoutShape::of(mode);
            let js = &s["fanout"];
            assert_eq!(
                (
                    js["clients"].as_u64(),
                    js["roomSize"].as_u64(),
                    js["deliveriesPerSecond"].as_f64(),
                    js["rampSeconds"].as_u64(),
                    js["holdSeconds"].as_u64()
                ),
                (
                    Some(fanout.clients),
                    Some(fanout.room_size),
                    Some(fanout.deliveries_per_second),
                    Some(fanout.ramp_seconds),
                    Some(fanout.hold_seconds)
                ),
                "fanout in {mode}"
            );
            let slow = SlowConsumersShape::of(mode);
            let js = &s["slow-consumers"];
            assert_eq!(
                (
                    js["clients"].as_u64(),
                    js["slowShare"].as_f64(),
                    js["chatsPerSecond"].as_f64(),
                    js["joinSeconds"].as_u64(),
                    js["baselineSeconds"].as_u64(),
                    js["slowSeconds"].as_u64(),
                    js["recoverySeconds"].as_u64()
                ),
                (
                    Some(slow.clients),
                    Some(slow.slow_share),
                    Some(slow.chats_per_second),
                    Some(slow.join_seconds),
                    Some(slow.baseline_seconds),
                    Some(slow.slow_seconds),
                    Some(slow.recovery_seconds)
                ),
                "slow-consumers in {mode}"
            );
            let curve = LoadCurveShape::of(mode);
            let js = &s["load-curve"];
            assert_eq!(
                (
                    js["clients"].as_u64(),
                    js["roomSize"].as_u64(),
                    js["steps"]
                        .as_array()
                        .map(|a| a.iter().filter_map(Value::as_f64).collect::<Vec<f64>>()),
                    js["rampSeconds"].as_u64(),
                    js["settleSeconds"].as_u64(),
                    js["holdSeconds"].as_u64()
                ),
                (
                    Some(curve.clients),
                    Some(curve.room_size),
                    Some(curve.steps.clone()),
                    Some(curve.ramp_seconds),
                    Some(curve.settle_seconds),
                    Some(curve.hold_seconds)
                ),
                "load-curve in {mode}"
            );
        }
    }

    #[test]
    fn the_load_curve_levels_inside_one_point_are_those_of_modes_js_with_and_without_deliveries() {
        for &mode in Mode::ALL {
            for given in [None, Some(vec![1_000.0, 5_000.0, 20_000.0])] {
                let env = format!(
                    "MODE: '{mode}', DELIVERIES: '{}'",
                    given.as_ref().map_or(String::new(), |levels| levels
                        .iter()
                        .map(f64::to_string)
                        .collect::<Vec<_>>()
                        .join(","))
                );
                let js = node(
                    &env,
                    "const s = m.shapeOf('load-curve'); console.log(JSON.stringify({ s, t: m.loadCurveLevels(s) }));",
                )
                .unwrap();
                let shape = LoadCurveShape::of(mode);
                let levels = given.clone().unwrap_or_else(|| shape.steps.clone());
                let planned = shape.levels(&levels);
                let from_js = js["t"]["levels"].as_array().unwrap();
                assert_eq!(planned.len(), from_js.len(), "{mode} {given:?}");
                for (rust, js_level) in planned.iter().zip(from_js) {
                    let ms = |key: &str| js_level[key].as_f64().map(|s| (s * 1000.0) as u64);
                    assert_eq!(
                        (
                            Some(rust.deliveries_per_s),
                            Some(rust.start_ms),
                            Some(rust.hold_from_ms),
                            Some(rust.to_ms)
                        ),
                        (
                            js_level["deliveriesPerSecond"].as_f64(),
                            ms("start"),
                            ms("holdFrom"),
                            ms("to")
                        ),
                        "{mode} {given:?}"
                    );
                    // Each level is the fan-out shape at its load, in both languages.
                    assert_eq!(
                        js_level["chatsPerSecond"].as_f64(),
                        Some(shape.at(rust.deliveries_per_s).chats_per_client_s())
                    );
                }
                assert_eq!(
                    js["t"]["end"].as_u64(),
                    Some(shape.seconds(levels.len())),
                    "{mode} {given:?}"
                );
            }
        }
        // Fewer clients in one room: the room follows them, in both languages.
        let small = node(
            "MODE: 'quick', CLIENTS: '200', DELIVERIES: '50000'",
            "console.log(JSON.stringify(m.shapeOf('load-curve')));",
        )
        .unwrap();
        let params = [(LoadParam::Clients, 200.0)].into_iter().collect();
        let rust = LoadCurveShape::with_params(Mode::Quick, &params);
        assert_eq!(
            (small["clients"].as_u64(), small["roomSize"].as_u64()),
            (Some(rust.clients), Some(rust.room_size))
        );
        assert_eq!(rust.room_size, 200);
        // A level over the rate limit stops k6 as the orchestrator refuses it.
        assert!(
            node(
                "MODE: 'quick', DELIVERIES: '50000,3000000'",
                "m.shapeOf('load-curve');"
            )
            .is_err()
        );
    }

    #[test]
    fn the_curves_steps_are_placed_geometrically_up_to_what_k6_can_receive() {
        let curve = LoadCurveShape::of(Mode::Quick);
        // A fast host: k6 receives 1.23M chats/s with both cores.
        assert_eq!(
            curve.placed_steps(1_234_567.0),
            [50_000.0, 140_000.0, 420_000.0, 1_200_000.0]
        );
        // A slow one: the top step comes down to k6's limit.
        assert_eq!(
            curve.placed_steps(300_000.0),
            [50_000.0, 91_000.0, 170_000.0, 300_000.0]
        );
        // Never above what the servers' rate limit lets 500 clients ask (2,495,000/s).
        assert_eq!(curve.placed_steps(9e6).last(), Some(&2_400_000.0));
        // No room above twice the first step: the shape's own steps, for the run to refuse.
        assert_eq!(curve.placed_steps(90_000.0), curve.steps);
        for ceiling in [100_000.0, 101_000.0, 777_777.0, 2e6] {
            assert!(
                check_steps(&curve.placed_steps(ceiling)).is_ok(),
                "{ceiling}"
            );
        }
    }

    #[test]
    fn load_curve_steps_that_do_not_rise_or_ask_over_the_rate_limit_are_refused() {
        assert!(check_steps(&[50_000.0, 100_000.0, 400_000.0]).is_ok());
        assert_eq!(
            check_steps(&[50_000.0, 40_000.0]).unwrap_err().to_string(),
            "--sweep deliveries: the load curve's steps must rise, each above the one before; 40000 follows 50000"
        );
        assert!(check_steps(&[50_000.0, 50_000.0]).is_err());
        // 500 clients in one room: 10 chats/s each is 2,495,000 deliveries/s.
        let at = |d: f64| -> LoadParams { [(LoadParam::Deliveries, d)].into_iter().collect() };
        assert!(check_point(Scenario::LoadCurve, Mode::Quick, &at(2_495_000.0)).is_ok());
        let err = check_point(Scenario::LoadCurve, Mode::Quick, &at(3_000_000.0)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("load-curve with 500 clients in rooms of 500 needs 12.0 chats"),
            "{err}"
        );
        // The default steps all run.
        assert!(check_point(Scenario::LoadCurve, Mode::Quick, &Default::default()).is_ok());
        assert!(check_point(Scenario::LoadCurve, Mode::Smoke, &Default::default()).is_ok());
    }

    #[test]
    fn room_size_and_slow_share_reach_their_shapes_through_the_environment() {
        let shape = |env: &str, name: &str| {
            node(
                env,
                &format!("console.log(JSON.stringify(m.shapeOf('{name}')));"),
            )
        };
        let fanout = shape("MODE: 'smoke', ROOM_SIZE: '2', CLIENTS: '80'", "fanout").unwrap();
        assert_eq!(
            (fanout["roomSize"].as_u64(), fanout["clients"].as_u64()),
            (Some(2), Some(80))
        );
        // What the orchestrator refuses before a run, the script refuses too.
        for (clients, room_size) in [(60.0, 2.0), (50.0, 100.0)] {
            let params = [
                (LoadParam::Clients, clients),
                (LoadParam::RoomSize, room_size),
            ]
            .into_iter()
            .collect();
            assert!(check_point(Scenario::Fanout, Mode::Smoke, &params).is_err());
            let env = format!("MODE: 'smoke', ROOM_SIZE: '{room_size}', CLIENTS: '{clients}'");
            assert!(shape(&env, "fanout").is_err(), "{env}");
        }
        let slow = shape("MODE: 'quick', SLOW_SHARE: '0.25'", "slow-consumers").unwrap();
        assert_eq!(slow["slowShare"].as_f64(), Some(0.25));
        let mut params = std::collections::BTreeMap::new();
        params.insert(LoadParam::SlowShare, 0.25);
        let ours = SlowConsumersShape::with_params(Mode::Quick, &params);
        assert_eq!(ours.slow_share, 0.25);
        assert_eq!(ours.slow_clients(), 75);
    }

    #[test]
    fn every_load_parameter_has_its_environment_name_and_its_allowed_values() {
        use LoadParam::*;
        assert_eq!(RoomSize.env_name(), "ROOM_SIZE");
        assert_eq!(SlowShare.env_name(), "SLOW_SHARE");
        assert_eq!(Clients.env_name(), "CLIENTS");
        assert!(accepts(RoomSize, 2.0) && accepts(RoomSize, 1000.0));
        assert!(!accepts(RoomSize, 1.0) && !accepts(RoomSize, 2.5));
        assert!(accepts(SlowShare, 0.1) && accepts(SlowShare, 0.99));
        assert!(!accepts(SlowShare, 0.0) && !accepts(SlowShare, 1.0));
        assert!(!accepts(SlowShare, f64::NAN));
        assert!(accepts(Rate, 2.5) && !accepts(Clients, 2.5));
        assert_eq!(requirement(RoomSize), "a whole number of at least 2");
    }

    #[test]
    fn a_fanout_room_larger_than_the_clients_or_over_the_rate_limit_is_refused() {
        let params = |pairs: &[(LoadParam, f64)]| pairs.iter().copied().collect::<LoadParams>();
        assert!(
            check_point(
                Scenario::Fanout,
                Mode::Quick,
                &params(&[(LoadParam::RoomSize, 1000.0)])
            )
            .is_ok()
        );
        assert!(
            check_point(
                Scenario::Fanout,
                Mode::Quick,
                &params(&[(LoadParam::RoomSize, 2.0)])
            )
            .is_ok()
        );
        let err = check_point(
            Scenario::Fanout,
            Mode::Smoke,
            &params(&[(LoadParam::RoomSize, 1000.0)]),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--sweep room-size=1000: fanout in smoke mode has 100 clients, fewer than one room; use room sizes up to 100 or more clients (--sweep clients=...)"
        );
        // 800 deliveries a second from 40 clients in pairs: 20 chats a second each.
        let err = check_point(
            Scenario::Fanout,
            Mode::Smoke,
            &params(&[(LoadParam::RoomSize, 2.0), (LoadParam::Clients, 40.0)]),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("20.0 chats per second per client"),
            "{err}"
        );
        assert!(
            check_point(
                Scenario::Steady,
                Mode::Smoke,
                &params(&[(LoadParam::Clients, 1.0)])
            )
            .is_ok()
        );
    }

    #[test]
    fn the_slow_consumers_phases_follow_one_another_from_the_join() {
        let shape = SlowConsumersShape::of(Mode::Quick);
        assert_eq!(shape.baseline_ms(), (2000, 12000));
        assert_eq!(shape.slow_ms(), (12000, 27000));
        assert_eq!(shape.recovery_ms(), (27000, 42000));
        assert_eq!(shape.slow_clients(), 30);
        assert_eq!(SlowConsumersShape::of(Mode::Smoke).slow_clients(), 4);
    }

    #[test]
    fn a_soak_duration_lengthens_steady_and_churn_only() {
        let s = shapes_with(Mode::Soak, Some(1800));
        assert_eq!(s["steady"]["holdSeconds"], 1800);
        assert_eq!(s["churn"]["durationSeconds"], 1800);
        assert_eq!(
            planned_seconds(Scenario::Steady, Mode::Soak, Some(1800)),
            1800
        );
        assert_eq!(
            planned_seconds(Scenario::Churn, Mode::Soak, Some(1800)),
            1800
        );
        assert_eq!(
            planned_seconds(Scenario::Saturation, Mode::Soak, Some(1800)),
            seconds(Scenario::Saturation, Mode::Soak)
        );
        assert_eq!(
            planned_seconds(Scenario::Steady, Mode::Seed, Some(1800)),
            60
        );
    }
}
