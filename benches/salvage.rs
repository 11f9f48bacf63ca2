//! Salvage throughput on loopback: messages/s and MB/s of a salvage (GetReplicateInfo +
//! DumpMessages into a dump file) of ~1 KiB and ~64 KiB messages from the demo server, beside
//! the rate at which the same server streams to a client that discards everything. The demo
//! keeps what it generated, so after a warm-up both read the same cached WAL; the ratio shows
//! what the salvage path (placing each frame, framing, writes, syncs) costs. A third
//! baseline is the disk: the same bytes written and fsynced, since a salvage's file must be
//! durable and cannot be made so faster than that. The fourth is the CPU no salvage can
//! avoid. The printed ceiling, the best salvage / raw the machine allows, is
//! raw / max(raw, floor), where the floor is:
//! - shared: the whole machine's busy CPU (`/proc/stat`, every process and kernel thread, so
//!   the server's and the writeback's too) during the raw pass plus during the disk baseline,
//!   over the machine's cores;
//! - own core: the discarding client's process CPU during the raw pass plus the kernel's copy
//!   of the same bytes into the page cache (written, not synced, beside each salvage's file),
//!   both on the client's one core (writeback may run on the server's);
//! - and, to the disk, at least the disk baseline's time.
//!
//! Shared, a second ceiling divides the floor by how busy the raw pass kept the cores (it never
//! keeps both fully busy, and neither does a salvage).
//!
//! The salvage's own CPU is printed the same way, so what it spends beyond the floor is in
//! plain sight.
//!
//! Each case runs in two setups:
//! - **shared**: the demo server in the bench's own process, so server, client and writer
//!   share the two cores;
//! - **own core**: the bench starts itself again as a child that only serves (it sees
//!   `WALSCOPE_BENCH_SERVE`), pinned to the first CPU, and pins itself to the second: the
//!   setup a real salvage meets, where the old primary runs on another machine. There the
//!   salvage also writes to tmpfs (`/dev/shm`, when it is one), which shows the salvage's
//!   own pace apart from the disk's.

use criterion::{BatchSize, Criterion, Throughput};
use futures::StreamExt;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use walscope::dump::SyncPolicy;
use walscope::net::grpc::{GrpcSettings, GrpcTransport};
use walscope::net::{CallOptions, Transport};
use walscope::salvage::job::{self as salvage, SalvageSpec};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};
use walscope::sim::{WalGenConfig, WalGenerator};

const PCHANNEL: &str = "by-dev-rootcoord-dml_1";
/// Set in the child that only serves: the rows per message of its WAL.
const SERVE_ENV: &str = "WALSCOPE_BENCH_SERVE";
/// The CPU that child pins itself to.
const CPU_ENV: &str = "WALSCOPE_BENCH_CPU";
/// Alternating raw/salvage passes behind the printed same-run ratio (its median).
const PASSES: usize = 7;

struct Case {
    name: &'static str,
    rows: u64,
    messages: usize,
}

fn wal(rows: u64) -> WalGenConfig {
    WalGenConfig { seed: 5, rows: (rows, rows), total: None, ..Default::default() }
}

/// What one case's runs share: the runtime, the DumpMessages call and its bounds.
struct Run<'a> {
    rt: &'a tokio::runtime::Runtime,
    dump: MethodDescriptor,
    request: DynamicMessage,
    end: u64,
}

impl Run<'_> {
    /// The stream drained by a client that keeps nothing: (messages, bytes).
    fn raw(&self, addr: &str) -> (u64, u64) {
        self.rt.block_on(async {
            let t = GrpcTransport::connect(&GrpcSettings::new(addr)).await.unwrap();
            let mut s =
                t.call_server_stream(&self.dump, &self.request, &CallOptions::default()).await.unwrap();
            let (mut n, mut bytes) = (0u64, 0u64);
            while let Some(m) = s.messages.next().await {
                n += 1;
                bytes += m.unwrap().len() as u64;
            }
            (n, bytes)
        })
    }

    /// A salvage of the same window into `out`: (frames, bytes written).
    fn salvage(&self, addr: &str, out: &Path) -> (u64, u64) {
        let spec = SalvageSpec {
            new_primary: GrpcSettings::new(addr),
            old_primary: GrpcSettings::new(addr),
            source_cluster_id: OLD_CLUSTER_ID.into(),
            pchannel: PCHANNEL.into(),
            out: out.to_path_buf(),
            end_timetick: self.end,
            resume: false,
            max_retries: 0,
            timeout: Duration::from_secs(60),
            // What the CLI and the window use.
            sync: SyncPolicy::default(),
        };
        let o = self.rt.block_on(async { salvage::spawn(spec).wait().await.unwrap() });
        (o.manifest.frames, o.manifest.bytes)
    }

    /// Prints the medians of alternating passes (raw, the disk, a salvage to each of `outs`),
    /// then lets criterion time each of them alone. `cpus`: the machine's.
    fn measure(
        &self,
        c: &mut Criterion,
        (group, setup): (&str, Setup),
        addr: &str,
        outs: &[(&str, PathBuf)],
        cpus: usize,
    ) {
        let timed = |f: &dyn Fn() -> (u64, u64)| {
            let (t, cpu) = (Instant::now(), Cpu::now());
            let (n, b) = f();
            (t.elapsed().as_secs_f64(), Cpu::now().since(cpu), n, b)
        };
        let (mut raw_s, mut raw_cpu, mut disk_s, mut disk_cpu) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut sal_s: Vec<Vec<f64>> = vec![Vec::new(); outs.len()];
        let mut sal_cpu: Vec<Vec<Cpu>> = vec![Vec::new(); outs.len()];
        let mut copy_cpu: Vec<Vec<f64>> = vec![Vec::new(); outs.len()];
        let (mut n, mut raw_bytes) = (0, 0);
        for _ in 0..PASSES {
            let (s, cpu, messages, bytes) = timed(&|| self.raw(addr));
            (n, raw_bytes) = (messages, bytes);
            raw_s.push(s);
            raw_cpu.push(cpu);
            // The disk varies from second to second here, so it is measured in every pass too.
            let (rate, cpu) = disk_rate(&outs[0].1, raw_bytes);
            disk_s.push(rate);
            disk_cpu.push(cpu);
            for (k, (_, out)) in outs.iter().enumerate() {
                copy_cpu[k].push(page_cache_write_cpu_s(out, raw_bytes));
                remove_dump(out);
                let (s, cpu, ..) = timed(&|| self.salvage(addr, out));
                sal_s[k].push(s);
                sal_cpu[k].push(cpu);
            }
        }
        let disk = median(&mut disk_s);
        let disk_machine = Cpu::median(&disk_cpu).machine;
        let raw = median(&mut raw_s);
        let raw_cpu = Cpu::median(&raw_cpu);
        let mb = raw_bytes as f64 / 1e6;
        print!(
            "{group}: {n} msgs, {:.0} B average | raw stream {raw:.3} s ({:.0} msg/s, {:.1} MB/s; CPU-s {}) | disk, write + fsync {disk:.1} MB/s ({disk_machine:.3} CPU-s machine)",
            raw_bytes as f64 / n as f64,
            n as f64 / raw,
            mb / raw,
            raw_cpu.words(),
        );
        for ((((label, _), s), cpu), copy) in outs.iter().zip(&mut sal_s).zip(&sal_cpu).zip(&mut copy_cpu) {
            let (s, cpu, copy) = (median(s), Cpu::median(cpu), median(copy));
            let cpu_floor = match setup {
                Setup::Shared => (raw_cpu.machine + disk_machine) / cpus as f64,
                Setup::OwnCore => raw_cpu.process + copy,
            };
            // A file on the disk cannot be made durable faster than the disk baseline did.
            let disk_floor = if *label == "disk" { mb / disk } else { 0.0 };
            let floor = cpu_floor.max(disk_floor);
            print!(
                " | salvage to {label} {s:.3} s (CPU-s {}), {:.2} of raw (page-cache write {copy:.3} CPU-s; ceiling {:.2}",
                cpu.words(),
                raw / s,
                raw / raw.max(floor),
            );
            if let Setup::Shared = setup {
                // The ceiling above lets a salvage keep both cores fully busy; the raw stream
                // itself keeps them only this busy (hand-offs between server and client), and
                // so does a salvage in practice.
                let busy = raw_cpu.machine / raw / cpus as f64;
                let at_raw_busy = raw / raw.max(cpu_floor / busy.min(1.0)).max(disk_floor);
                print!(", {at_raw_busy:.2} with the cores {:.0}% busy as in the raw stream", busy * 100.0);
            }
            print!(")");
            if *label == "disk" {
                print!(", {:.2} of min(raw, disk)", (mb / s) / (mb / raw).min(disk));
            }
        }
        println!(" (medians of {PASSES} alternating passes)");
        let mut g = c.benchmark_group(group);
        g.sample_size(10).measurement_time(Duration::from_secs(8)).throughput(Throughput::Elements(n));
        g.bench_function("raw_stream_discard", |b| b.iter(|| self.raw(addr)));
        for (label, out) in outs {
            // A salvage writes a new file; the last run's is removed untimed (truncating 200 MB
            // of a file still being written back costs the filesystem ~0.15 s, not the salvage).
            g.bench_function(format!("salvage_to_{label}"), |b| {
                b.iter_batched(|| remove_dump(out), |()| self.salvage(addr, out), BatchSize::PerIteration)
            });
        }
        g.finish();
        for (_, out) in outs {
            remove_dump(out);
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn remove_dump(out: &Path) {
    let _ = std::fs::remove_file(out);
    let _ = std::fs::remove_file(walscope::dump::manifest_path(out));
}

/// `bytes` of `fill` written to `f` in 1 MiB writes: the baselines' way of writing.
fn write_in_mib_writes(f: &mut std::fs::File, bytes: u64, fill: u8) {
    let chunk = vec![fill; 1 << 20];
    let mut left = bytes as usize;
    while left > 0 {
        let k = left.min(chunk.len());
        f.write_all(&chunk[..k]).unwrap();
        left -= k;
    }
}

/// The disk's own limit in MB/s: `bytes` written in 1 MiB writes and fsynced beside `out`.
fn disk_rate(out: &Path, bytes: u64) -> (f64, Cpu) {
    let path = out.with_extension("disk-baseline");
    let (t, cpu) = (Instant::now(), Cpu::now());
    let mut f = std::fs::File::create(&path).unwrap();
    write_in_mib_writes(&mut f, bytes, 0x5a);
    f.sync_data().unwrap();
    let (mbs, cpu) = (bytes as f64 / t.elapsed().as_secs_f64() / 1e6, Cpu::now().since(cpu));
    std::fs::remove_file(&path).unwrap();
    (mbs, cpu)
}

#[derive(Clone, Copy)]
enum Setup {
    Shared,
    OwnCore,
}

/// CPU seconds: this process's (user + system) and the whole machine's busy time.
#[derive(Clone, Copy)]
struct Cpu {
    process: f64,
    machine: f64,
}

impl Cpu {
    fn now() -> Cpu {
        Cpu { process: cpu_s(libc::RUSAGE_SELF), machine: machine_busy_s() }
    }

    fn since(self, before: Cpu) -> Cpu {
        Cpu { process: self.process - before.process, machine: self.machine - before.machine }
    }

    fn median(all: &[Cpu]) -> Cpu {
        Cpu {
            process: median(&mut all.iter().map(|c| c.process).collect::<Vec<_>>()),
            machine: median(&mut all.iter().map(|c| c.machine).collect::<Vec<_>>()),
        }
    }

    fn words(self) -> String {
        format!("{:.3} here, {:.3} machine", self.process, self.machine)
    }
}

/// Busy CPU time of every CPU since boot (`/proc/stat`: user, nice, system, irq, softirq;
/// not idle, iowait or time stolen by the hypervisor), to the kernel's tick (10 ms).
fn machine_busy_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let line = stat.lines().next().unwrap();
    let ticks: Vec<f64> = line.split_whitespace().skip(1).map(|t| t.parse().unwrap()).collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    [0, 1, 2, 5, 6].iter().map(|&i| ticks[i]).sum::<f64>() / hz
}

fn cpu_s(who: libc::c_int) -> f64 {
    // SAFETY: rusage is plain numbers; getrusage fills it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid rusage to write.
    let rc = unsafe { libc::getrusage(who, &mut u) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// The CPU it costs this thread to copy `bytes` into the page cache beside `out` (1 MiB
/// writes, no sync): the part of a salvage's write no writer can skip. The file is removed
/// after, untimed.
fn page_cache_write_cpu_s(out: &Path, bytes: u64) -> f64 {
    let path = out.with_extension("page-cache-baseline");
    let mut f = std::fs::File::create(&path).unwrap();
    let cpu = cpu_s(libc::RUSAGE_THREAD);
    write_in_mib_writes(&mut f, bytes, 0xa5);
    let spent = cpu_s(libc::RUSAGE_THREAD) - cpu;
    drop(f);
    std::fs::remove_file(&path).unwrap();
    spent
}

/// Pins the calling thread (0) or thread `tid` to one CPU, or frees it (None).
fn pin(tid: libc::pid_t, cpu: Option<usize>) {
    // SAFETY: a cpu_set_t is plain bits; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // Every CPU the system has (not `available_parallelism`, which shrinks once pinned).
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    for c in 0..cpus {
        if cpu.is_none_or(|only| only == c) {
            // SAFETY: c is below the set's capacity (CPU_SETSIZE is 1024).
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    // SAFETY: the set is initialised and its size is passed.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "sched_setaffinity({tid}, {cpu:?}): {}", std::io::Error::last_os_error());
}

/// Every thread of this process (the runtime's workers too) on one CPU, or freed. Threads
/// started later (the dump writer's) inherit their creator's.
fn pin_process(cpu: Option<usize>) {
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        if let Some(tid) = task.unwrap().file_name().to_str().and_then(|t| t.parse().ok()) {
            pin(tid, cpu);
        }
    }
}

/// The child that only serves: pinned before its runtime exists, so its one worker is too.
fn serve(rows: u64) {
    let cpu = std::env::var(CPU_ENV).ok().and_then(|c| c.parse().ok()).unwrap_or(0);
    pin(0, Some(cpu));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let demo =
        rt.block_on(MilvusDemo::start(MilvusDemoConfig { wal: wal(rows), ..Default::default() })).unwrap();
    println!("ADDR {}", demo.addr());
    std::io::stdout().flush().unwrap();
    // Serves until the bench closes our stdin (or dies).
    let _ = std::io::stdin().read_line(&mut String::new());
    rt.block_on(demo.shutdown());
}

/// A serving child on CPU 0; dropped, it is told to stop and waited for.
struct ServerProcess {
    child: Child,
    addr: String,
}

impl ServerProcess {
    fn start(rows: u64) -> ServerProcess {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(SERVE_ENV, rows.to_string())
            .env(CPU_ENV, "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line.trim().strip_prefix("ADDR ").expect("the serving child's address").to_string();
        ServerProcess { child, addr }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let set = SchemaSet::builtin();
    let svc = set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    let dump = svc.methods().find(|m| m.name() == "DumpMessages").unwrap();
    let dir = tempfile::tempdir().unwrap();
    // tmpfs only when /dev/shm is one (its fsync is free, so the disk drops out).
    let shm = Path::new("/dev/shm");
    let tmpfs =
        std::fs::metadata(shm).is_ok_and(|m| m.is_dir()).then(|| tempfile::tempdir_in(shm).ok()).flatten();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let own_core = cpus >= 2;
    // `SALVAGE_CASE=64KiB` runs one case (for a profile of it alone).
    let only = std::env::var("SALVAGE_CASE").ok();
    for case in
        // About 1 KiB (2 rows) and 64 KiB (170 rows) per message, ~200 MB each: long enough that
        // the rate is the stream's, not the set-up's (two connections, the checkpoint, the file).
        [
            Case { name: "1KiB", rows: 2, messages: 200_000 },
            Case { name: "64KiB", rows: 170, messages: 3_000 },
        ]
    {
        if only.as_ref().is_some_and(|o| o != case.name) {
            continue;
        }
        // The end timetick that bounds the dump to about `messages` messages.
        let msgs: Vec<_> = WalGenerator::new(set.pool(), wal(case.rows))
            .filter(|m| m.pchannel == PCHANNEL)
            .take(case.messages + 10)
            .collect();
        let (first, end) = (&msgs[0], msgs[case.messages + 5].timetick);
        let request = DynamicMessage::deserialize(
            dump.input(),
            serde_json::json!({"pchannel": PCHANNEL, "start_message_id": {"id": first.message_id, "WAL_name": "Pulsar"},
                "include_start_message": true, "end_timetick": end.to_string()}),
        )
        .unwrap();
        let run = Run { rt: &rt, dump: dump.clone(), request, end };
        let on_disk = ("disk", dir.path().join("bench.dump"));

        let demo = rt
            .block_on(MilvusDemo::start(MilvusDemoConfig { wal: wal(case.rows), ..Default::default() }))
            .unwrap();
        let addr = demo.addr().to_string();
        run.raw(&addr); // warm-up: the demo generates and caches the WAL
        run.measure(
            c,
            (&format!("salvage_{}_shared", case.name), Setup::Shared),
            &addr,
            std::slice::from_ref(&on_disk),
            cpus,
        );
        rt.block_on(demo.shutdown());

        if !own_core {
            println!("salvage_{}_server_own_core: skipped, this machine has one CPU", case.name);
            continue;
        }
        let server = ServerProcess::start(case.rows);
        pin_process(Some(1));
        run.raw(&server.addr);
        let mut outs = vec![on_disk];
        if let Some(t) = &tmpfs {
            outs.push(("tmpfs", t.path().join("bench.dump")));
        }
        let group = format!("salvage_{}_server_own_core", case.name);
        run.measure(c, (&group, Setup::OwnCore), &server.addr, &outs, cpus);
        pin_process(None);
        drop(server);
    }
}

fn main() {
    if let Some(rows) = std::env::var(SERVE_ENV).ok().and_then(|r| r.parse().ok()) {
        return serve(rows);
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
