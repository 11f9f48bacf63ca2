//! `walscope demo` as a real process, and `walscope call` over each transport (gRPC, brpc,
//! HTTP/JSON) and through a saved profile, all on loopback.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_walscope");

struct Demo {
    child: Child,
    milvus: String,
    synctool: String,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_demo() -> Demo {
    let mut child = Command::new(BIN)
        .args(["demo", "--milvus-port", "0", "--synctool-port", "0", "--collector-port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut addr = |prefix: &str| loop {
        let line = lines.next().expect("demo output").unwrap();
        if line.starts_with(prefix) {
            return line.split_whitespace().last().unwrap().to_string();
        }
    };
    let milvus = addr("demo Milvus");
    let synctool = addr("demo SyncTool");
    // Keep reading whatever else the demo prints so it never writes into a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Demo { child, milvus, synctool }
}

fn call(args: &[&str], envs: &[(&str, &str)]) -> serde_json::Value {
    let o = Command::new(BIN).arg("call").args(args).envs(envs.iter().copied()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn demo_servers_answer_on_every_transport() {
    let d = start_demo();
    let v = call(&[&d.milvus, "milvus.proto.milvus.MilvusService/GetVersion"], &[]);
    assert_eq!(v["version"], "v2.6.20-walscope-demo");
    for transport in ["brpc", "http"] {
        let created = call(
            &[
                &d.synctool,
                "openmldb.datasync.SyncTool/CreateSyncTask",
                "--transport",
                transport,
                "-d",
                &format!(
                    r#"{{"db": "demo_db", "name": "{}", "mode": 2}}"#,
                    if transport == "brpc" { "orders" } else { "users" }
                ),
            ],
            &[],
        );
        assert_eq!(created["code"], 0, "{created}");
    }
    let status = call(&[&d.synctool, "openmldb.datasync.SyncTool/TaskStatus", "--transport", "brpc"], &[]);
    assert_eq!(status["task"].as_array().unwrap().len(), 3, "{status}");
    // An unknown method is a clear error before anything is sent.
    let o = Command::new(BIN)
        .args(["call", &d.synctool, "openmldb.datasync.SyncTool/Nope", "--transport", "brpc"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no method Nope"));

    // A saved profile stands in for endpoint and transport.
    let dir = tempfile::tempdir().unwrap();
    let profiles =
        format!(r#"[{{"name": "demo-synctool", "transport": "brpc", "endpoint": "{}"}}]"#, d.synctool);
    std::fs::write(dir.path().join("profiles.json"), profiles).unwrap();
    let cfg = dir.path().to_str().unwrap();
    let via_profile =
        call(&["demo-synctool", "openmldb.datasync.SyncTool/TaskStatus"], &[("WALSCOPE_CONFIG_DIR", cfg)]);
    assert_eq!(via_profile["task"].as_array().unwrap().len(), 3);
}

/// Whoever reads the banner may stop reading (`walscope demo | head -1`): the servers keep
/// serving instead of dying on the closed pipe. (CI once failed exactly this way: the test had
/// read the addresses it needed and dropped the pipe while the demo was still printing.)
#[test]
fn demo_keeps_serving_after_its_stdout_closes() {
    let mut child = Command::new(BIN)
        .args([
            "demo",
            "--milvus-port",
            "0",
            "--old-milvus-port",
            "0",
            "--synctool-port",
            "0",
            "--collector-port",
            "0",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first address the demo prints (port 0: it chose the port), then close the
    // reading end while it is still printing the others.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let first = lines.next().expect("a banner line").unwrap();
    drop(lines);
    let milvus = first.split_whitespace().last().expect("an address").to_string();
    assert!(milvus.starts_with("127.0.0.1:"), "{first}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(&milvus).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "the demo exited when its stdout closed");
        assert!(std::time::Instant::now() < deadline, "the demo never listened on {milvus}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Listening comes before the banner; give the banner time to hit the closed pipe.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let demo = Demo { child, milvus, synctool: String::new() };
    let v = call(&[&demo.milvus, "milvus.proto.milvus.MilvusService/GetVersion"], &[]);
    assert_eq!(v["version"], "v2.6.20-walscope-demo");
}
