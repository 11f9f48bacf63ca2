//! `walscope tasks` against the demo SyncTool and DataCollector on loopback.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;

fn walscope(args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_create_delete_over_brpc_and_http() {
    let any = "127.0.0.1:0".parse().unwrap();
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(20), full_mode_batches: 3 };
    let d = DatasyncDemo::start(any, any, Duration::from_secs(30), cfg).await.unwrap();
    let ep = d.synctool.addr().to_string();
    let run = |args: Vec<&str>, stdin: &'static str| {
        let args: Vec<String> = args.into_iter().map(str::to_string).collect();
        tokio::task::spawn_blocking(move || {
            walscope(&args.iter().map(String::as_str).collect::<Vec<_>>(), stdin)
        })
    };
    let (ok, out, _) = run(vec!["tasks", "status", "--endpoint", &ep], "").await.unwrap();
    assert!(ok && out.contains("no sync tasks"), "{out}");
    let (ok, _, err) = run(
        vec![
            "tasks",
            "create",
            "--endpoint",
            &ep,
            "--db",
            "demo_db",
            "--table",
            "orders",
            "--mode",
            "2",
            "--dest",
            "/tmp/o",
        ],
        "",
    )
    .await
    .unwrap();
    assert!(ok, "{err}");
    let (ok, _, err) = run(
        vec![
            "tasks",
            "create",
            "--endpoint",
            &ep,
            "--transport",
            "http",
            "--db",
            "demo_db",
            "--table",
            "orders",
            "--mode",
            "2",
            "--dest",
            "/tmp/o",
        ],
        "",
    )
    .await
    .unwrap();
    assert!(!ok && err.contains("sync task already exists"), "{err}");
    let start = Instant::now();
    loop {
        let (ok, out, _) =
            run(vec!["tasks", "status", "--endpoint", &ep, "--transport", "http"], "").await.unwrap();
        assert!(ok);
        if out.lines().filter(|l| l.contains("RUNNING") && l.contains("binlog offset=")).count() == 2 {
            assert!(out.contains(&d.collector.addr().to_string()), "{out}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{out}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (ok, out, _) = run(vec!["tasks", "status", "--endpoint", &ep, "--json"], "").await.unwrap();
    assert!(ok && out.contains("\"readableInfo\""), "{out}");
    // Delete asks first; "no" deletes nothing.
    let (ok, _, err) =
        run(vec!["tasks", "delete", "--endpoint", &ep, "--db", "demo_db", "--table", "orders"], "no\n")
            .await
            .unwrap();
    assert!(!ok && err.contains("not confirmed"), "{err}");
    let (ok, _, err) =
        run(vec!["tasks", "delete", "--endpoint", &ep, "--db", "demo_db", "--table", "orders"], "yes\n")
            .await
            .unwrap();
    assert!(ok, "{err}");
    let (_, out, _) = run(vec!["tasks", "status", "--endpoint", &ep], "").await.unwrap();
    assert!(out.contains("no sync tasks"), "{out}");
    let (ok, _, err) =
        run(vec!["tasks", "delete", "--endpoint", &ep, "--db", "demo_db", "--table", "orders", "--yes"], "")
            .await
            .unwrap();
    assert!(!ok && err.contains("no sync task for demo_db.orders"), "{err}");
    let (ok, _, err) = run(vec!["tasks", "status", "--endpoint", "127.0.0.1:1"], "").await.unwrap();
    assert!(!ok && err.contains("cannot connect to 127.0.0.1:1"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_watch_prints_rates() {
    use std::io::{BufRead, BufReader};
    let any = "127.0.0.1:0".parse().unwrap();
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(20), full_mode_batches: 3 };
    let d = DatasyncDemo::start(any, any, Duration::from_secs(30), cfg).await.unwrap();
    let ep = d.synctool.addr().to_string();
    let e2 = ep.clone();
    let (ok, _, err) = tokio::task::spawn_blocking(move || {
        walscope(
            &[
                "tasks",
                "create",
                "--endpoint",
                &e2,
                "--db",
                "demo_db",
                "--table",
                "users",
                "--mode",
                "2",
                "--dest",
                "/tmp/u",
            ],
            "",
        )
    })
    .await
    .unwrap();
    assert!(ok, "{err}");
    // The child's lines arrive through a channel, so a line that never comes fails the test at a
    // deadline instead of hanging it.
    let rate = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_walscope"))
            .args(["tasks", "status", "--endpoint", &ep, "--watch", "1"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut rate = None;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            let Ok(line) = rx.recv_timeout(left) else { break };
            // "  7/0: 123.4 rows/s": the rate of a partition that is receiving rows.
            let value = line
                .strip_suffix(" rows/s")
                .and_then(|l| l.rsplit(' ').next())
                .and_then(|v| v.parse::<f64>().ok());
            if let Some(v) = value.filter(|v| *v > 0.0) {
                rate = Some(v);
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        rate
    })
    .await
    .unwrap();
    // The collector sends a batch every 20 ms: a moving partition shows a real, nonzero rate.
    let rate = rate.expect("--watch printed a nonzero rate within 30 s");
    assert!(rate > 1.0 && rate < 1e6, "a plausible rate: {rate}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_profile_names_the_synctool() {
    let any = "127.0.0.1:0".parse().unwrap();
    let d = DatasyncDemo::start(any, any, Duration::from_secs(30), CollectorConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let profiles = format!(
        r#"[{{"name": "st", "transport": "http", "endpoint": "{}", "timeout_secs": 5}},
            {{"name": "milvus", "transport": "grpc", "endpoint": "127.0.0.1:1"}}]"#,
        d.synctool.addr()
    );
    std::fs::write(dir.path().join("profiles.json"), profiles).unwrap();
    let cfg = dir.path().to_path_buf();
    let run = move |args: &'static [&'static str]| {
        let cfg = cfg.clone();
        tokio::task::spawn_blocking(move || {
            let o = Command::new(env!("CARGO_BIN_EXE_walscope"))
                .args(args)
                .env("WALSCOPE_CONFIG_DIR", cfg)
                .output()
                .unwrap();
            (
                o.status.success(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        })
    };
    let (ok, out, err) = run(&["tasks", "status", "--endpoint", "st"]).await.unwrap();
    assert!(ok && out.contains("no sync tasks"), "{out}{err}");
    let (ok, _, err) = run(&[
        "tasks",
        "create",
        "--endpoint",
        "st",
        "--db",
        "demo_db",
        "--table",
        "cache",
        "--mode",
        "2",
        "--dest",
        "/t",
    ])
    .await
    .unwrap();
    assert!(!ok && err.contains("CreateSyncTask refused by SyncTool (code -1)"), "{err}");
    let (ok, _, err) = run(&["tasks", "status", "--endpoint", "milvus"]).await.unwrap();
    assert!(!ok && err.contains("is a gRPC (Milvus) profile"), "{err}");
}
