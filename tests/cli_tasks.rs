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
    let found = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_walscope"))
            .args(["tasks", "status", "--endpoint", &ep, "--watch", "1"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut found = false;
        for line in lines.map_while(Result::ok) {
            if line.contains("rows/s") {
                found = true;
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        found
    })
    .await
    .unwrap();
    assert!(found, "--watch printed a rate");
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
