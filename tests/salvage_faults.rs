//! Fault injection over loopback: the salvage's stream dropped at 100 random points, a server
//! stalling past the deadline, a server restarting mid-dump, a file-size limit standing in for
//! a full disk, and the walscope process killed (SIGKILL) at random points of a salvage and of
//! a save. In every case the dump on disk holds every frame received up to its last complete
//! one, the manifest is never ahead of the data, and the resume completes the dump with no
//! duplicate and no gap, byte for byte an uninterrupted run. A killed save leaves the original
//! or the new file, never a mix.

use crate::common;

use common::salvage::{PCHANNEL, demo, demo_at, expected, spec};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use walscope::dump::{Manifest, manifest_path};
use walscope::salvage::job as salvage;
use walscope::sim::milvus::{Faults, OLD_CLUSTER_ID};
use walscope::sim::rng::SimRng;

/// What a dump interrupted anywhere must be: a prefix of the uninterrupted run (the frames
/// before the last complete one, plus at most part of one more), with the manifest at or
/// behind a frame boundary of that prefix. Returns the manifest's frame count.
fn check_interrupted(out: &Path, want: &[u8]) -> u64 {
    let got = std::fs::read(out).unwrap_or_default();
    assert!(got.len() <= want.len() && got[..] == want[..got.len()], "not a prefix of the uninterrupted run");
    let Ok(m) = Manifest::load(&manifest_path(out)) else { return 0 };
    assert!(m.bytes <= got.len() as u64, "manifest says {} bytes, the file has {}", m.bytes, got.len());
    assert!(!m.complete);
    // The manifest's byte count is a frame boundary: the frames before it parse to exactly it.
    let mut pos = 0usize;
    for _ in 0..m.frames {
        let (len, after) = walscope::wire::varint::read_varint(&got, pos, got.len()).expect("frame header");
        pos = after + len as usize;
    }
    assert_eq!(pos as u64, m.bytes, "the manifest's frames end where it says");
    m.frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_dropped_at_100_random_points_loses_and_repeats_nothing() {
    let (want, end, count) = expected(300);
    let demo = demo(Faults::default()).await;
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SimRng::new(17);
    for trial in 0..100 {
        let at = rng.range(0, count as u64 - 1);
        demo.set_faults(Faults { drop_after: Some(at), ..Default::default() });
        let out = dir.path().join(format!("trial-{trial}.dump"));
        if trial % 2 == 0 {
            // The job reconnects by itself.
            let outcome = salvage::spawn(spec(&addr, &out, end, false, 2)).wait().await.unwrap();
            assert!(outcome.manifest.complete, "trial {trial}");
        } else {
            // No retries: the job stops; the file is whole up to the drop; a resume finishes it.
            let job = salvage::spawn(spec(&addr, &out, end, false, 0));
            let progress = job.progress.clone();
            let err = job.wait().await.unwrap_err();
            assert!(err.to_string().contains("UNAVAILABLE"), "trial {trial}: {err}");
            assert_eq!(check_interrupted(&out, &want), at, "trial {trial}: every received frame is kept");
            // The failed job's last word counts what its file holds, not its last report.
            let last = progress.borrow().clone();
            assert!(
                matches!(last.state, salvage::SalvageState::Failed(_)),
                "trial {trial}: {:?}",
                last.state
            );
            assert_eq!(last.frames, at, "trial {trial}: the final progress counts every kept frame");
            // A run that failed before its first frame created no file: it is started again.
            assert_eq!(out.exists(), at > 0, "trial {trial}: a file only once a frame arrived");
            let outcome = salvage::spawn(spec(&addr, &out, end, at > 0, 0)).wait().await.unwrap();
            assert!(outcome.manifest.complete, "trial {trial}");
        }
        assert!(std::fs::read(&out).unwrap() == want, "trial {trial}: dropped after {at}");
    }
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_server_times_out_and_the_resume_completes() {
    let (want, end, _) = expected(600);
    let demo = demo(Faults { stall_after: Some(250), ..Default::default() }).await;
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stall.dump");
    let mut s = spec(&addr, &out, end, false, 0);
    s.timeout = Duration::from_millis(700);
    let started = Instant::now();
    let err = salvage::spawn(s).wait().await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("DEADLINE_EXCEEDED") && text.contains("resume"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(20), "the deadline bounds the wait");
    assert_eq!(check_interrupted(&out, &want), 250);
    demo.set_faults(Faults::default());
    let outcome = salvage::spawn(spec(&addr, &out, end, true, 0)).wait().await.unwrap();
    assert!(outcome.manifest.complete);
    assert!(std::fs::read(&out).unwrap() == want);
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarting_mid_dump_is_reconnected_to() {
    let (want, end, _) = expected(3_000);
    let first = demo(Faults::default()).await;
    let addr = first.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("restart.dump");
    let mut handle = salvage::spawn(spec(&addr, &out, end, false, 10));
    while handle.progress.borrow().frames < 200 {
        handle.progress.changed().await.unwrap();
    }
    first.kill().await;
    let second = demo_at(&addr, Faults::default()).await;
    let outcome = handle.wait().await.unwrap();
    assert!(outcome.manifest.complete);
    assert!(outcome.reconnects >= 1, "the restart was reconnected to");
    assert!(std::fs::read(&out).unwrap() == want, "the dump differs from an uninterrupted run");
    second.shutdown().await;
}

fn salvage_child(addr: &str, out: &Path, end: u64, resume: bool, file_limit: Option<u64>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_walscope"));
    cmd.args([
        "salvage",
        "--new-primary",
        addr,
        "--old-primary",
        addr,
        "--source-cluster-id",
        OLD_CLUSTER_ID,
    ]);
    cmd.args(["--pchannel", PCHANNEL, "--end-timetick", &end.to_string(), "--retries", "0"]);
    cmd.arg("--out").arg(out).stdout(Stdio::null()).stderr(Stdio::piped());
    if resume {
        cmd.arg("--resume");
    }
    if let Some(limit) = file_limit {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit between fork and exec touches no memory of the parent.
        unsafe {
            cmd.pre_exec(move || {
                let l = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    cmd.spawn().unwrap()
}

fn finish(child: Child) -> (bool, String) {
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_stops_the_salvage_with_a_resumable_file() {
    let (want, end, _) = expected(3_000);
    let demo = demo(Faults::default()).await;
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("full.dump");
    let limit = want.len() as u64 / 3;
    let child = salvage_child(&addr, &out, end, false, Some(limit));
    let (ok, stderr) = tokio::task::spawn_blocking(move || finish(child)).await.unwrap();
    assert!(!ok, "a salvage that cannot write must fail");
    assert!(stderr.contains("full.dump") && stderr.to_lowercase().contains("too large"), "{stderr}");
    let frames = check_interrupted(&out, &want);
    assert!(frames > 0, "what fitted was kept");
    let (ok, stderr) =
        tokio::task::spawn_blocking(move || finish(salvage_child(&addr, &out, end, true, None)))
            .await
            .unwrap();
    assert!(ok, "{stderr}");
    assert!(std::fs::read(dir.path().join("full.dump")).unwrap() == want);
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_of_a_salvage_resumes_to_the_same_dump() {
    let (want, end, _) = expected(8_000);
    let demo = demo(Faults::default()).await;
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SimRng::new(23);
    for trial in 0..5 {
        let out = dir.path().join(format!("killed-{trial}.dump"));
        let kill_at = rng.range(1, want.len() as u64 * 9 / 10);
        let mut child = salvage_child(&addr, &out, end, false, None);
        let started = Instant::now();
        loop {
            let size = std::fs::metadata(&out).map_or(0, |m| m.len());
            if size >= kill_at {
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break; // finished before the kill: still a valid trial of the checks below
            }
            assert!(started.elapsed() < Duration::from_secs(120), "trial {trial}: no progress");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        if std::fs::read(&out).unwrap_or_default() != want {
            check_interrupted(&out, &want);
        }
        let (a, o) = (addr.clone(), out.clone());
        let (ok, stderr) =
            tokio::task::spawn_blocking(move || finish(salvage_child(&a, &o, end, true, None)))
                .await
                .unwrap();
        assert!(ok, "trial {trial}: {stderr}");
        assert!(std::fs::read(&out).unwrap() == want, "trial {trial}: killed at {kill_at} bytes");
    }
    demo.shutdown().await;
}

#[test]
fn sigkill_during_a_save_leaves_the_old_or_the_new_file_whole() {
    let set = walscope::schema::SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.dump");
    walscope::sim::sample::write_milvus_dump(
        set.pool(),
        &path,
        15_000,
        3,
        walscope::dump::SyncPolicy::default(),
        None,
    )
    .unwrap();
    let original = std::fs::read(&path).unwrap();
    let edit = |file: &Path| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_walscope"));
        cmd.args(["edit"]).arg(file).args(["--framing", "varint", "--frame", "0"]);
        cmd.args(["--type", "milvus.proto.milvus.DumpMessagesResponse"]);
        cmd.args(["--set", "message.properties[\"_vc\"]=edited"]).stdout(Stdio::null()).stderr(Stdio::null());
        cmd
    };
    // The new file, from an uninterrupted save of a copy.
    let copy = dir.path().join("copy.dump");
    std::fs::write(&copy, &original).unwrap();
    let started = Instant::now();
    assert!(edit(&copy).status().unwrap().success());
    let save_takes = started.elapsed();
    let edited = std::fs::read(&copy).unwrap();
    assert_ne!(edited, original);

    let (mut saw_old, mut saw_new) = (0, 0);
    // Kills spread over the whole save (as long as one took), from its start to past its end;
    // past twelve trials the kills come later still, until both outcomes are seen (a save under
    // a loaded machine takes longer than the one measured).
    for trial in 0..48u32 {
        if trial >= 12 && saw_old > 0 && saw_new > 0 {
            break;
        }
        std::fs::write(&path, &original).unwrap();
        let mut child = edit(&path).spawn().unwrap();
        std::thread::sleep(save_takes * trial / 8);
        let _ = child.kill();
        let _ = child.wait();
        let now = std::fs::read(&path).unwrap();
        assert!(now == original || now == edited, "trial {trial}: a mix of the old and the new file");
        if now == original { saw_old += 1 } else { saw_new += 1 }
    }
    // Kills came both before and after the rename, or the trials proved nothing.
    assert!(saw_old > 0 && saw_new > 0, "old {saw_old}, new {saw_new}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_leaves_a_resumable_file_that_the_resume_completes() {
    let (want, end, _) = expected(8_000);
    let demo = demo(Faults::default()).await;
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("interrupted.dump");
    let child = salvage_child(&addr, &out, end, false, None);
    let started = Instant::now();
    while std::fs::metadata(&out).map_or(0, |m| m.len()) < want.len() as u64 / 4 {
        assert!(started.elapsed() < Duration::from_secs(120), "no progress");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // SAFETY: kill(2) with the pid of a child we own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let (ok, stderr) = tokio::task::spawn_blocking(move || finish(child)).await.unwrap();
    let frames = check_interrupted(&out, &want);
    if std::fs::read(&out).unwrap() != want {
        assert!(!ok, "an interrupted salvage does not claim success");
        assert!(stderr.contains("--resume"), "the way on is said: {stderr}");
        let m = Manifest::load(&manifest_path(&out)).unwrap();
        assert_eq!(m.bytes, std::fs::metadata(&out).unwrap().len(), "Ctrl-C syncs the manifest to the data");
        assert!(frames > 0);
    }
    let (a, o) = (addr.clone(), out.clone());
    let (ok, stderr) =
        tokio::task::spawn_blocking(move || finish(salvage_child(&a, &o, end, true, None))).await.unwrap();
    assert!(ok, "{stderr}");
    assert!(std::fs::read(&out).unwrap() == want);
    demo.shutdown().await;
}
