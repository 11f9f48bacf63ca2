//! What one frame of the desktop app costs on the UI thread with a ~1 GiB, one-million-frame
//! dump open, beside a baseline taken in the same run: the same operations on the 100-message
//! sample (assets/samples/milvus-100.dump). The 1M/100 ratio is what we report; absolute times
//! depend on the machine.
//!
//! The app runs headless in egui_kittest. A measured frame is `Harness::step` (the app's
//! `ui()`, egui layout, and the AccessKit tree kittest always asks for) plus tessellating the
//! frame's shapes, which the native integration also does on the UI thread. Uploading and
//! painting on the GPU is not included. Time is CPU time of the UI thread
//! (`CLOCK_THREAD_CPUTIME_ID`): the index builder and the row loader run on their own threads
//! and are not counted. Wall time is reported beside it.
//!
//! Scenarios, each with its own criterion benchmark (iter_custom returns thread CPU):
//! * `scroll`: every frame turns the mouse wheel 3 lines over the message table; the first
//!   visible row is checked to move (so the benchmark measures scrolling, not a still table);
//! * `select_arrow_down`: every frame presses ArrowDown, so the selection moves one row and the
//!   detail decodes one message;
//! * `while_indexing` (1M only): the file is opened afresh and the table is scrolled while the
//!   index is still being built; reports whether frames kept coming and how long they took.
//!
//! A summary table (mean, p99, max per frame, ms) goes to stderr. WALSCOPE_BENCH_FRAMES
//! overrides the frame count of the large file (default 1,000,000).

mod common;

use common::thread_cpu;
use criterion::{Criterion, criterion_group, criterion_main};
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use walscope::ui::WalscopeApp;

use eframe::egui::{self, Event, Key, Modifiers, MouseWheelUnit, Pos2, TouchPhase, Vec2};

type H = Harness<'static, WalscopeApp>;

#[derive(Clone, Copy)]
struct Sample {
    cpu: Duration,
    wall: Duration,
}

/// Where the pointer rests while scrolling: over the message table (the detail is on the right).
const OVER_TABLE: Pos2 = Pos2::new(300.0, 450.0);

fn harness() -> H {
    Harness::builder()
        .with_size(Vec2::new(1280.0, 800.0))
        // A display's frame interval (the default, 0.25 s, would make wheel smoothing jumpy).
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), WalscopeApp::new())
}

fn step_until(h: &mut H, what: &str, limit: Duration, done: impl Fn(&mut H) -> bool) {
    let start = Instant::now();
    loop {
        h.step();
        if done(h) {
            return;
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The app with `path` open in its only tab (the index may still be building).
fn open(path: &Path) -> H {
    let mut h = harness();
    h.step();
    h.state_mut().open(path.to_path_buf());
    step_until(&mut h, "the file to open", Duration::from_secs(60), |h| h.state().tabs.len() == 1);
    h
}

/// The app with `path` open, indexed, and the first rows decoded.
fn open_settled(path: &Path) -> H {
    let mut h = open(path);
    step_until(&mut h, "the index", Duration::from_secs(600), |h| h.state().tabs[0].dump.index().is_done());
    settle_rows(&mut h);
    h
}

/// Steps until no visible row waits for the row loader.
fn settle_rows(h: &mut H) {
    step_until(h, "decoded rows", Duration::from_secs(60), |h| h.query_by_label("...").is_none());
}

/// The text of a label node (AccessKit keeps a `Role::Label`'s text in its value).
fn text_of(n: &egui_kittest::kittest::AccessKitNode<'_>) -> Option<String> {
    if n.role() == egui::accesskit::Role::Label { n.value() } else { n.label() }
}

/// The frame number of the topmost row on screen (read from the "#" column).
fn first_visible_row(h: &H) -> Option<usize> {
    let hash = h.query_by_label_contains("# (")?.rect();
    let (x0, x1, top) = (hash.min.x - 4.0, hash.min.x + 56.0, hash.max.y);
    h.query_all(By::new().predicate(|n| text_of(n).is_some_and(|l| l.parse::<usize>().is_ok())))
        .filter(|n| {
            let r = n.rect();
            r.center().x >= x0 && r.center().x <= x1 && r.max.y > top
        })
        .filter_map(|n| text_of(&n.accesskit_node())?.parse().ok())
        .min()
}

/// One frame with `events` as its input, measured: step (ui + layout + AccessKit) and tessellation.
fn frame(h: &mut H, events: Vec<Event>) -> Sample {
    h.input_mut().events.extend(events);
    let (c0, w0) = (thread_cpu(), Instant::now());
    h.step();
    let (c1, w1) = (thread_cpu(), Instant::now());
    let (shapes, ppp) = (h.output().shapes.clone(), h.output().pixels_per_point);
    let (c2, w2) = (thread_cpu(), Instant::now());
    let prims = h.ctx.tessellate(shapes, ppp);
    let s = Sample { cpu: (c1 - c0) + (thread_cpu() - c2), wall: (w1 - w0) + w2.elapsed() };
    drop(prims);
    s
}

fn wheel(lines: f32, phase: TouchPhase) -> Event {
    Event::MouseWheel {
        unit: MouseWheelUnit::Line,
        delta: Vec2::new(0.0, lines),
        phase,
        source: egui::MouseWheelSource::Wheel,
        modifiers: Modifiers::NONE,
    }
}

fn key(k: Key, pressed: bool) -> Event {
    Event::Key { key: k, physical_key: None, pressed, repeat: false, modifiers: Modifiers::NONE }
}

/// Scrolls the table, one wheel turn per frame, turning back at either end.
struct Scroller {
    down: bool,
    /// Just turned: end the wheel gesture first, or egui's smoothing keeps the old direction.
    turned: bool,
    still: usize,
    last: Option<usize>,
    frames: usize,
    moved: usize,
}

impl Scroller {
    fn new(h: &mut H) -> Scroller {
        h.input_mut().events.push(Event::PointerMoved(OVER_TABLE));
        h.step();
        Scroller { down: true, turned: false, still: 0, last: first_visible_row(h), frames: 0, moved: 0 }
    }

    fn frame(&mut self, h: &mut H) -> Sample {
        let lines = if self.down { -3.0 } else { 3.0 };
        let mut events = vec![wheel(lines, TouchPhase::Move)];
        if std::mem::take(&mut self.turned) {
            events.insert(0, wheel(0.0, TouchPhase::End));
        }
        let s = frame(h, events);
        let now = first_visible_row(h);
        self.frames += 1;
        if now != self.last {
            self.moved += 1;
            self.still = 0;
        } else {
            self.still += 1;
            // Stuck at an end (or between wheel steps for a few frames): turn around.
            if self.still >= 2 {
                self.down = !self.down;
                self.turned = true;
                self.still = 0;
            }
        }
        self.last = now;
        s
    }

    fn check(&self, name: &str) {
        assert!(
            // The 100-row sample hits its ends every dozen frames and turns back; 1M rows never do.
            self.moved * 3 >= self.frames * 2,
            "{name}: the first visible row moved in only {} of {} frames: not measuring scrolling",
            self.moved,
            self.frames
        );
    }
}

/// Moves the selection down one row per frame with the arrow key.
struct Selector {
    rows: usize,
    frames: usize,
}

impl Selector {
    fn new(h: &mut H) -> Selector {
        h.state_mut().tabs[0].select(0);
        h.step();
        Selector { rows: h.state().tabs[0].row_count(), frames: 0 }
    }

    fn frame(&mut self, h: &mut H) -> Sample {
        let before = h.state().tabs[0].selected.unwrap_or(0);
        if before + 1 >= self.rows.min(1_000) {
            // Back to the top (unmeasured); keeps the run among rows the loader has seen.
            h.state_mut().tabs[0].select(0);
            h.step();
            return self.frame(h);
        }
        let s = frame(h, vec![key(Key::ArrowDown, true), key(Key::ArrowDown, false)]);
        let tab = &h.state().tabs[0];
        assert_eq!(tab.selected, Some(before + 1), "ArrowDown moves the selection");
        assert_eq!(tab.detail.as_ref().map(|d| d.index), Some(before + 1), "the detail follows");
        self.frames += 1;
        s
    }
}

#[derive(Default)]
struct Summary {
    rows: Vec<String>,
}

impl Summary {
    fn add(&mut self, name: &str, samples: &[Sample]) -> f64 {
        if samples.is_empty() {
            return f64::NAN; // filtered out on the command line
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut cpu: Vec<f64> = samples.iter().map(|s| ms(s.cpu)).collect();
        let mut wall: Vec<f64> = samples.iter().map(|s| ms(s.wall)).collect();
        cpu.sort_by(f64::total_cmp);
        wall.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let p99 =
            |v: &[f64]| v.get((v.len() * 99 / 100).min(v.len().saturating_sub(1))).copied().unwrap_or(0.0);
        let max = |v: &[f64]| v.last().copied().unwrap_or(0.0);
        self.rows.push(format!(
            "{name:<34} {:>6} {:>8.3} {:>8.3} {:>8.3} | {:>8.3} {:>8.3} {:>8.3}",
            samples.len(),
            mean(&cpu),
            p99(&cpu),
            max(&cpu),
            mean(&wall),
            p99(&wall),
            max(&wall)
        ));
        mean(&cpu)
    }

    fn ratio(&mut self, what: &str, frames: u64, big: f64, small: f64) {
        self.rows.push(format!("{what:<34} {frames}/100 ratio of mean CPU: {:.2}x", big / small.max(1e-9)));
    }

    fn print(&self) {
        eprintln!("\n== walscope GUI frame benchmark (UI thread, per frame, ms) ==");
        eprintln!(
            "{:<34} {:>6} {:>8} {:>8} {:>8} | {:>8} {:>8} {:>8}",
            "scenario", "frames", "cpu mean", "cpu p99", "cpu max", "wallmean", "wall p99", "wall max"
        );
        for r in &self.rows {
            eprintln!("{r}");
        }
        eprintln!("(frame = kittest step + tessellation; GPU upload and paint not included)");
    }
}

/// Mean thread CPU of `f`, in ms.
fn component(runs: u32, mut f: impl FnMut()) -> f64 {
    let t = thread_cpu();
    for _ in 0..runs {
        f();
    }
    (thread_cpu() - t).as_secs_f64() * 1e3 / f64::from(runs)
}

/// Runs `frame_fn` `iters` times, returning their summed thread CPU, and keeps every sample.
fn custom(samples: &RefCell<Vec<Sample>>, iters: u64, mut frame_fn: impl FnMut() -> Sample) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let s = frame_fn();
        total += s.cpu;
        samples.borrow_mut().push(s);
    }
    total
}

fn sample_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/milvus-100.dump")
}

fn benches(c: &mut Criterion) {
    let big = common::bench_file();
    let n = common::frames_wanted();
    let small = sample_file();
    let mut summary = Summary::default();
    let mut means = std::collections::HashMap::new();

    let mut g = c.benchmark_group("gui_frame");
    g.sample_size(20).warm_up_time(Duration::from_secs(2)).measurement_time(Duration::from_secs(5));

    for (label, path) in [("100", &small), ("1M", &big)] {
        let label = if label == "1M" { format!("{n}") } else { label.to_string() };

        let mut h = open_settled(path);
        let mut scroller = Scroller::new(&mut h);
        let samples = RefCell::new(Vec::new());
        g.bench_function(format!("scroll/{label}"), |b| {
            b.iter_custom(|iters| custom(&samples, iters, || scroller.frame(&mut h)))
        });
        scroller.check(&format!("scroll/{label}"));
        let name = format!("scroll/{label} ({}/{} moved)", scroller.moved, scroller.frames);
        means.insert(("scroll", label.clone()), summary.add(&name, &samples.borrow()));
        let idle: Vec<Sample> = (0..200).map(|_| frame(&mut h, Vec::new())).collect();
        summary.add(&format!("  idle frame, no selection/{label}"), &idle);
        drop(h);

        let mut h = open_settled(path);
        let mut selector = Selector::new(&mut h);
        let samples = RefCell::new(Vec::new());
        g.bench_function(format!("select_arrow_down/{label}"), |b| {
            b.iter_custom(|iters| custom(&samples, iters, || selector.frame(&mut h)))
        });
        let name = format!("select_arrow_down/{label}");
        means.insert(("select", label.clone()), summary.add(&name, &samples.borrow()));
        // Parts of a selecting frame, timed alone on this thread.
        let idle: Vec<Sample> = (0..200).map(|_| frame(&mut h, Vec::new())).collect();
        summary.add(&format!("  idle frame, a row selected/{label}"), &idle);
        let part = component(50, || {
            std::hint::black_box(h.state().tabs[0].neighbour(1));
        });
        summary.rows.push(format!("  part: FileTab::neighbour (an arrow key press): {part:.3} ms"));
        let part = component(50, || h.state_mut().tabs[0].select(7));
        summary
            .rows
            .push(format!("  part: FileTab::select (decode one message for the detail): {part:.3} ms"));
        let part = component(50, || {
            let d = h.state().tabs[0].detail.as_ref().expect("a detail");
            drop(d.copy_forms(path, "varint"));
        });
        summary
            .rows
            .push(format!("  part: detail copy_forms() (only when a copy button is clicked): {part:.3} ms"));
        drop(h);
    }
    g.finish();

    let big_label = format!("{n}");
    for what in ["scroll", "select"] {
        if let (Some(b), Some(s)) = (means.get(&(what, big_label.clone())), means.get(&(what, "100".into())))
            && b.is_finite()
            && s.is_finite()
        {
            summary.ratio(what, n, *b, *s);
        }
    }

    // While the index is being built: open afresh and scroll until the index is done.
    let t0 = Instant::now();
    let mut h = open(&big);
    let mut scroller = Scroller::new(&mut h);
    let mut samples = Vec::new();
    let mut counts = Vec::new();
    while !h.state().tabs[0].dump.index().is_done() {
        samples.push(scroller.frame(&mut h));
        counts.push(h.state().tabs[0].row_count());
    }
    let took = t0.elapsed();
    let grew = counts.windows(2).filter(|w| w[1] > w[0]).count();
    summary.add(&format!("while_indexing/{big_label}"), &samples);
    summary.rows.push(format!(
        "  index built in {:.2} s while {} frames were drawn ({:.0} frames/s); row count grew in {} of them; first row moved in {}",
        took.as_secs_f64(),
        samples.len(),
        samples.len() as f64 / took.as_secs_f64(),
        grew,
        scroller.moved
    ));
    summary.print();
}

criterion_group!(gui, benches);
criterion_main!(gui);
