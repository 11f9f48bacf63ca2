//! `walscope salvage` into a folder, end to end: the binary against an in-process demo pair
//! (an old and a new primary after a forced failover) on 127.0.0.1, both named by saved
//! profiles. Several pchannels in parallel with `--out-dir`, one of them cut by a dropped
//! stream, then `--resume` of the folder: every dump equals an uninterrupted run;
//! `--all-pchannels` with `--keep-replicated`, and the single-file form, record the choice.

use std::path::Path;
use std::process::{Command, Output};
use walscope::dump::{Manifest, manifest_path};
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::salvage::folder::FolderManifest;
use walscope::salvage::job::SalvageRecord;
use walscope::salvage::set::{self as salvage_set, SalvageSetSpec};
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::sim::milvus::{Faults, OLD_CLUSTER_ID};

const PCHANNELS: [&str; 3] = ["by-dev-rootcoord-dml_0", "by-dev-rootcoord-dml_1", "by-dev-rootcoord-dml_2"];

async fn run(args: Vec<String>, config: &Path) -> Output {
    let config = config.to_path_buf();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_walscope"))
            .args(args)
            .env("WALSCOPE_CONFIG_DIR", config)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn skip_choice(dump: &Path) -> bool {
    let m = Manifest::load(&manifest_path(dump)).unwrap();
    SalvageRecord::of(&m).expect("the manifest records the salvage").skip_replicated
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_dir_with_several_pchannels_then_resume_equals_an_uninterrupted_run() {
    let wal = WalGenConfig { seed: 31, rows: (1, 1), total: None, ..Default::default() };
    let cfg = |faults| MilvusPairConfig { wal: wal.clone(), old_faults: faults, ..Default::default() };
    // The old primary's first stream drops after 80 messages.
    let p = MilvusPair::start(cfg(Faults { drop_after: Some(80), ..Default::default() })).await.unwrap();
    let clean = MilvusPair::start(cfg(Faults::default())).await.unwrap();
    let root = tempfile::tempdir().unwrap();
    let config = root.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    let profiles = format!(
        r#"[{{"name": "new", "transport": "grpc", "endpoint": "{}"}}, {{"name": "old", "transport": "grpc", "endpoint": "{}"}}]"#,
        p.new_addr(),
        p.old_addr()
    );
    std::fs::write(config.join("profiles.json"), profiles).unwrap();
    let end = ((walscope::sim::walgen::START_MS + 2_000) << 18).to_string();
    let dir = root.path().join("salvage");
    let dir_s = dir.to_str().unwrap().to_string();

    let mut args = strings(&["salvage", "--new-primary", "new", "--old-primary", "old"]);
    args.extend(strings(&[
        "--source-cluster-id",
        OLD_CLUSTER_ID,
        "--out-dir",
        &dir_s,
        "--end-timetick",
        &end,
    ]));
    args.extend(strings(&["--retries", "0"]));
    for pc in PCHANNELS {
        args.extend(strings(&["--pchannel", pc]));
    }
    let out = run(args, &config).await;
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "one stream was dropped: {stdout}\n{stderr}");
    assert_eq!(stdout.matches("FAILED, resumable with --resume").count(), 1, "{stdout}");
    assert!(stdout.contains("UNAVAILABLE") && stdout.contains("2 of 3 dumps complete"), "{stdout}");
    assert!(stderr.contains("checkpoint") && stderr.contains("UTC"), "{stderr}");

    // The folder resumed: its old primary comes from salvage.json (the profile "old").
    let out = run(strings(&["salvage", "--out-dir", &dir_s, "--resume"]), &config).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 of 3 dumps complete"), "{stdout}");
    assert!(stdout.contains("types: ") && stdout.contains("were skipped"), "{stdout}");

    // The same window, uninterrupted, through the library.
    let want = root.path().join("want");
    let profile =
        |n: &str, a: std::net::SocketAddr| ConnectionProfile::plain(n, TransportKind::Grpc, a.to_string());
    let mut spec = SalvageSetSpec::new(
        profile("new", clean.new_addr()),
        profile("old", clean.old_addr()),
        OLD_CLUSTER_ID,
        PCHANNELS.iter().map(|s| s.to_string()).collect(),
        &want,
    );
    spec.end_timetick = Some(end.parse().unwrap());
    let (m, _) = salvage_set::start(spec).await.unwrap().wait().await;
    assert!(m.pchannels.iter().all(|e| e.complete));
    for pc in PCHANNELS {
        let (got, expected) = (dir.join(format!("{pc}.dump")), want.join(format!("{pc}.dump")));
        assert!(std::fs::read(&got).unwrap() == std::fs::read(&expected).unwrap(), "{pc} differs");
        assert!(skip_choice(&got));
    }
    let folder = FolderManifest::load(&dir).unwrap();
    assert!(folder.skip_replicated && folder.pchannels.iter().all(|e| e.complete && e.last_error.is_none()));
    assert_eq!(folder.old_primary.profile.as_deref(), Some("old"));

    // Every pchannel from the old primary's configuration, keeping the replicated messages.
    let keep = root.path().join("keep");
    let keep_s = keep.to_str().unwrap().to_string();
    let mut args = strings(&["salvage", "--new-primary", "new", "--old-primary", "old", "--all-pchannels"]);
    args.extend(strings(&["--keep-replicated", "--source-cluster-id", OLD_CLUSTER_ID]));
    args.extend(strings(&["--out-dir", &keep_s, "--end-timetick", &end]));
    let out = run(args, &config).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("4 of 4 dumps complete") && stdout.contains("already has them"), "{stdout}");
    let folder = FolderManifest::load(&keep).unwrap();
    assert!(!folder.skip_replicated && folder.pchannels.len() == 4);
    let kept = keep.join("by-dev-rootcoord-dml_1.dump");
    assert!(!skip_choice(&kept));
    assert!(
        std::fs::metadata(&kept).unwrap().len()
            > std::fs::metadata(dir.join("by-dev-rootcoord-dml_1.dump")).unwrap().len()
    );

    // The single-file form keeps its flags, and the choice.
    let file = root.path().join("one.dump");
    let mut args = strings(&["salvage", "--new-primary", "new", "--old-primary", "old"]);
    args.extend(strings(&["--source-cluster-id", OLD_CLUSTER_ID, "--pchannel", "by-dev-rootcoord-dml_1"]));
    args.extend(strings(&["--out", file.to_str().unwrap(), "--end-timetick", &end, "--keep-replicated"]));
    let out = run(args, &config).await;
    let (_, stderr) = text(&out);
    assert!(out.status.success() && stderr.contains("complete"), "{stderr}");
    assert!(!skip_choice(&file));
    assert!(std::fs::read(&file).unwrap() == std::fs::read(&kept).unwrap());

    // A folder that holds a salvage is not started over.
    let mut args = strings(&["salvage", "--new-primary", "new", "--old-primary", "old", "--all-pchannels"]);
    args.extend(strings(&["--source-cluster-id", OLD_CLUSTER_ID, "--out-dir", &keep_s]));
    let out = run(args, &config).await;
    assert!(!out.status.success() && text(&out).1.contains("resume it"), "{:?}", text(&out));
    p.shutdown().await;
    clean.shutdown().await;
}
