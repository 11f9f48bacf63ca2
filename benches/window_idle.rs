//! What the real window costs when nobody touches it (issue #38, "idle means idle"): the
//! `walscope` binary in a real X server (Xvfb, software-rendered like a remote desktop), its CPU
//! over a quiet spell read from `/proc/PID/stat` (every thread of the process: the UI thread,
//! the renderer's, the jobs', and with `--demo` the in-process demo servers).
//!
//! Cases, measured one after the other in the same run:
//! * `start page`: the window with nothing open (the baseline: nothing on screen can change);
//! * `file open`: a copy of the 100-message sample dump open in a tab;
//! * `--demo`: the demo servers and the sync-task dashboard's poller, the sample's copy open.
//!
//! Each case is started, left `WALSCOPE_IDLE_SETTLE` seconds (default 8) to paint and load, then
//! measured over `WALSCOPE_IDLE_SECONDS` (default 20). Prints % of one core per case and the
//! ratio to the start page. Targets (issue #38): idle ≤ 2% of a core, with the poller ≤ 5%.
//! Needs Xvfb (`apt-get install xvfb`); without it the bench says so and measures nothing.
//! `WALSCOPE_IDLE_BIN=PATH` measures another build of walscope (an older one, for a before and
//! after in the same run) instead of this one.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An X server of our own on a free display, stopped on drop.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Option<Xvfb> {
        let n = (90..120).find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists())?;
        let display = format!(":{n}");
        let child = Command::new("Xvfb")
            .args([display.as_str(), "-screen", "0", "1400x900x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Xvfb { child, display })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU seconds (user + system, every thread) the process has used so far.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields counted from after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(ticks / hz)
}

fn env_secs(name: &str, default: u64) -> Duration {
    Duration::from_secs(std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default))
}

/// Starts the window with `args` on `x`, lets it settle, and returns its CPU over the quiet
/// spell in % of one core.
fn measure(x: &Xvfb, config: &Path, args: &[&str]) -> Result<f64, String> {
    let bin = std::env::var_os("WALSCOPE_IDLE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_walscope").into());
    let mut app = Command::new(bin)
        .args(args)
        .env("DISPLAY", &x.display)
        .env("WALSCOPE_CONFIG_DIR", config)
        .env("WALSCOPE_CACHE_DIR", config.join("cache"))
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("start walscope: {e}"))?;
    std::thread::sleep(env_secs("WALSCOPE_IDLE_SETTLE", 8));
    let quiet = env_secs("WALSCOPE_IDLE_SECONDS", 20);
    let result = match cpu_seconds(app.id()) {
        Some(before) => {
            let started = Instant::now();
            std::thread::sleep(quiet);
            match cpu_seconds(app.id()) {
                Some(after) => Ok((after - before) / started.elapsed().as_secs_f64() * 100.0),
                None => Err("the window exited while measured".to_string()),
            }
        }
        None => Err("the window exited before it was measured".to_string()),
    };
    let _ = app.kill();
    let _ = app.wait();
    result
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(x) = Xvfb::start() else {
        eprintln!("window_idle: no Xvfb here (apt-get install xvfb); nothing measured");
        return;
    };
    let dir = tempfile::tempdir().expect("a temp folder");
    let sample: PathBuf = dir.path().join("milvus-100.dump");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/milvus-100.dump"), &sample)
        .expect("copy the sample");
    let sample = sample.to_string_lossy().into_owned();
    let cases: [(&str, Vec<&str>, f64); 3] = [
        ("start page", vec![], 2.0),
        ("file open", vec![sample.as_str()], 2.0),
        ("--demo (servers and poller)", vec!["--demo", sample.as_str()], 5.0),
    ];
    let mut rows = Vec::new();
    for (i, (name, args, target)) in cases.iter().enumerate() {
        let config = dir.path().join(format!("config-{i}"));
        std::fs::create_dir_all(&config).expect("config folder");
        match measure(&x, &config, args) {
            Ok(pct) => rows.push((*name, pct, *target)),
            Err(e) => eprintln!("window_idle: {name}: {e}"),
        }
    }
    let base = rows.first().map(|r| r.1).unwrap_or(0.0);
    println!("window idle, CPU over {} s in % of one core:", env_secs("WALSCOPE_IDLE_SECONDS", 20).as_secs());
    println!("{:<30} {:>8} {:>14} {:>8}", "case", "% core", "vs start page", "target");
    for (name, pct, target) in rows {
        let ratio = if base > 0.0 { format!("{:.2}x", pct / base) } else { "-".to_string() };
        let verdict = if pct <= target { "met" } else { "NOT met" };
        println!("{name:<30} {pct:>7.2}% {ratio:>14} {:>5.0}% {verdict}", target);
    }
}
