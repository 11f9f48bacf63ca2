//! The headless CLI end to end: decode in every format, encode back to the same bytes, edit
//! one field and nothing else, and clear failures for a wrong type or a truncated file.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use walscope::codec;
use walscope::schema::SchemaSet;

const BIN: &str = env!("CARGO_BIN_EXE_walscope");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run walscope")
}

fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

const VCHANNEL: &str = "by-dev-rootcoord-dml_0_4491v0";

/// A DumpMessagesResponse carrying an Insert WAL message, built the way the server would.
fn dump_response() -> Vec<u8> {
    let set = SchemaSet::builtin();
    let insert = set.message("milvus.proto.msg.InsertRequest").unwrap();
    let body = codec::from_json(&insert, r#"{"collectionID": "4491", "shardName": "by-dev-rootcoord-dml_0_4491v0", "numRows": "2", "rowIDs": ["1", "2"]}"#).unwrap();
    let payload = codec::encode(&body);
    let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    let json = format!(
        r#"{{"message": {{"id": {{"id": "rz", "WALName": "RocksMQ"}}, "payload": "{}", "properties": {{"_t": "2", "_v": "1", "_vc": "{VCHANNEL}", "_tt": "1d7ukyi1wgw00"}}}}}}"#,
        base64_encode(&payload)
    );
    codec::encode(&codec::from_json(&resp, &json).unwrap())
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn write_dump(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let bytes = dump_response();
    let p = dir.join("resp.bin");
    std::fs::write(&p, &bytes).unwrap();
    (p, bytes)
}

const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

#[test]
fn decode_prints_id_properties_and_payload_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (p, bytes) = write_dump(dir.path());
    let p = p.to_str().unwrap();

    let tree = stdout(&run(&["decode", "--type", T, p]));
    assert!(tree.starts_with(&format!("{T} ({} bytes)", bytes.len())), "{tree}");
    assert!(tree.contains("id: \"rz\""), "{tree}");
    assert!(tree.contains("WAL_name: RocksMQ (1)"), "{tree}");
    assert!(tree.contains(&format!("properties[\"_vc\"]: \"{VCHANNEL}\"")), "{tree}");
    assert!(tree.contains("payload: "), "{tree}");
    assert!(tree.contains("# bytes @"), "spans shown: {tree}");

    let json = stdout(&run(&["decode", "--type", T, "--format", "json", p]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["message"]["id"]["id"], "rz");
    assert_eq!(v["message"]["properties"]["_vc"], VCHANNEL);
    assert!(v["message"]["payload"].as_str().unwrap().len() > 10);

    let text = stdout(&run(&["decode", "--type", T, "--format", "text", p]));
    assert!(text.contains("id: \"rz\""), "{text}");
    assert!(text.contains("key: \"_vc\""), "{text}");
    assert!(text.contains("payload: \""), "{text}");

    let wire = stdout(&run(&["decode", "--format", "wire", p]));
    assert!(wire.contains("2 {"), "field 2 as a guessed message: {wire}");
    assert!(wire.contains(&format!("\"{VCHANNEL}\"")), "{wire}");
    assert!(wire.contains("@0.."), "{wire}");

    // Standard input works the same, and short type names are accepted.
    let from_stdin =
        stdout(&run_stdin(&["decode", "--type", "DumpMessagesResponse", "--format", "json", "-"], &bytes));
    assert_eq!(from_stdin, json);
}

#[test]
fn encode_of_the_json_gives_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (p, bytes) = write_dump(dir.path());
    let json = stdout(&run(&["decode", "--type", T, "--format", "json", p.to_str().unwrap()]));
    let jp = dir.path().join("resp.json");
    std::fs::write(&jp, &json).unwrap();
    let out = dir.path().join("again.bin");
    let o =
        run(&["encode", "--type", T, "--from", "json", jp.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
    // To standard output through a pipe, and from text format.
    let piped = run_stdin(&["encode", "--type", T, "--from", "json", "-"], json.as_bytes());
    assert_eq!(piped.stdout, bytes);
    let text = stdout(&run(&["decode", "--type", T, "--format", "text", p.to_str().unwrap()]));
    let from_text = run_stdin(&["encode", "--type", T, "--from", "text", "-"], text.as_bytes());
    assert_eq!(from_text.stdout, bytes);
    // Bad JSON names the line and column.
    let bad =
        run_stdin(&["encode", "--type", T, "--from", "json", "-"], b"{\n \"message\": {\"nosuch\": 1}}");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("line 2 column"), "{err}");
}

#[test]
fn edit_set_changes_one_field_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (p, bytes) = write_dump(dir.path());
    let out = dir.path().join("edited.bin");
    let o = run(&[
        "edit",
        p.to_str().unwrap(),
        "--type",
        T,
        "--set",
        "message.properties[\"_vc\"]=by-dev-rootcoord-dml_1_4491v0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let edited = std::fs::read(&out).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), bytes, "--out leaves the input alone");
    assert_eq!(edited.len(), bytes.len());
    let diffs: Vec<usize> = (0..bytes.len()).filter(|i| bytes[*i] != edited[*i]).collect();
    assert_eq!(diffs.len(), 1, "one character of the vchannel differs");
    assert_eq!((bytes[diffs[0]], edited[diffs[0]]), (b'0', b'1'));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("every other byte is unchanged"), "{stderr}");

    // In place: atomic replace with a backup of the original.
    let o = run(&["edit", p.to_str().unwrap(), "--type", T, "--set", "message.id.id=s0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(dir.path().join("resp.bin.bak")).unwrap(), bytes);
    let json = stdout(&run(&["decode", "--type", T, "--format", "json", p.to_str().unwrap()]));
    assert!(json.contains("\"s0\""), "{json}");

    // --dry-run writes nothing.
    let before = std::fs::read(&p).unwrap();
    let o = run(&["edit", p.to_str().unwrap(), "--type", T, "--clear", "message.payload", "--dry-run"]);
    assert!(o.status.success());
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn wrong_type_and_truncated_file_fail_naming_the_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (p, bytes) = write_dump(dir.path());
    // MessageID.WAL_name (field 2) is a varint; the dump's field 2 is length-delimited.
    let o = run(&["decode", "--type", "milvus.proto.common.MessageID", p.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a valid milvus.proto.common.MessageID: at byte 0: field 2 (WAL_name) is declared varint but encoded as length-delimited: wrong type?"), "{err}");
    // SyncPoint.pk (field 2) is a string: the nested message is not UTF-8.
    let o = run(&["decode", "--type", "openmldb.datasync.SyncPoint", p.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a valid openmldb.datasync.SyncPoint: at byte "), "{err}");
    assert!(err.contains("is --type right?"), "{err}");

    // A type whose fields are all absent from the bytes: every format says so (the tree from
    // its wire spans, JSON and text from the fields read without them). The second file holds
    // only an unknown group (field 99), which the fields' reader hands to the wire tree.
    let group = dir.path().join("group.bin");
    std::fs::write(&group, [0x9b, 0x06, 0x08, 0x01, 0x9c, 0x06]).unwrap();
    for (file, type_name, field) in
        [(&p, "openmldb.datasync.TaskStatusRequest", 2), (&group, "milvus.proto.common.MessageID", 99)]
    {
        for format in ["tree", "json", "text"] {
            let o = run(&["decode", "--type", type_name, "--format", format, file.to_str().unwrap()]);
            assert!(!o.status.success(), "{format}");
            let err = String::from_utf8_lossy(&o.stderr);
            let want = format!("at byte 0: field {field} is not a field of {type_name}");
            assert!(err.contains(&want), "{format}: {err}");
        }
    }

    let cut = dir.path().join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() - 5]).unwrap();
    let o = run(&["decode", "--type", T, "--format", "json", cut.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("at byte 1: length prefix says"), "{err}");
    assert!(err.contains("truncated"), "{err}");
    // The tree format still shows what it could read before failing.
    let o = run(&["decode", "--type", T, cut.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("(unparsed)"));

    let o = run(&["decode", "--type", "NoSuchType", p.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown type \"NoSuchType\""));
    let o = run(&["decode", "--type", T, dir.path().join("absent").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
}

#[test]
fn schema_list_show_and_user_protos() {
    let list = stdout(&run(&["schema", "list", "--filter", "datasync"]));
    assert!(list.contains("message  openmldb.datasync.SyncPoint"), "{list}");
    assert!(list.contains("service  openmldb.datasync.SyncTool"), "{list}");
    let show = stdout(&run(&["schema", "show", "openmldb.datasync.SyncPoint"]));
    assert!(show.contains("required SyncType type = 1;"), "{show}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.proto"),
        "syntax = \"proto3\"; package mine; message Ping { string note = 1; }",
    )
    .unwrap();
    let show = stdout(&run(&[
        "schema",
        "show",
        "mine.Ping",
        "--proto-path",
        dir.path().to_str().unwrap(),
        "--proto",
        "mine.proto",
    ]));
    assert!(show.contains("string note = 1;"), "{show}");
    let set = dir.path().join("all.pb");
    stdout(&run(&[
        "schema",
        "export",
        "--out",
        set.to_str().unwrap(),
        "--no-builtin",
        "--proto-path",
        dir.path().to_str().unwrap(),
        "--proto",
        "mine.proto",
    ]));
    let show = stdout(&run(&[
        "schema",
        "show",
        "mine.Ping",
        "--no-builtin",
        "--descriptor-set",
        set.to_str().unwrap(),
    ]));
    assert!(show.contains("string note = 1;"), "{show}");
}

/// `completions` and `man` are made from the same definition the CLI parses with: every
/// subcommand is in the completion script and has its man page; pages already there are kept
/// unless `--force`.
#[test]
fn completions_and_man_pages_come_from_the_cli_itself() {
    use clap::CommandFactory;
    let subcommands: Vec<String> =
        walscope::cli::Cli::command().get_subcommands().map(|c| c.get_name().to_string()).collect();
    assert!(subcommands.iter().any(|s| s == "inspect") && subcommands.iter().any(|s| s == "man"));
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout(&run(&["completions", shell]));
        for s in &subcommands {
            assert!(script.contains(s.as_str()), "{shell} completions lack {s}");
        }
    }
    let page = stdout(&run(&["man"]));
    assert!(page.contains(".TH walscope 1") && page.contains("inspect"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    stdout(&run(&["man", "--out-dir", d]));
    for s in &subcommands {
        let p = dir.path().join(format!("walscope-{s}.1"));
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(&format!(".TH walscope-{s} 1")), "{}", p.display());
    }
    let again = run(&["man", "--out-dir", d]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("already exists"));
    // With --force a page that changed is replaced and kept as .bak; an unchanged one is not
    // written at all.
    std::fs::write(dir.path().join("walscope.1"), "the operator's own notes").unwrap();
    stdout(&run(&["man", "--out-dir", d, "--force"]));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("walscope.1.bak")).unwrap(),
        "the operator's own notes"
    );
    assert!(!dir.path().join("walscope-inspect.1.bak").exists());
}

/// A WAL message is read the way Milvus reads it, in every format: properties (type, timetick
/// as UTC, vchannel, id), the header from `_h` and the payload as their types; the JSON keeps
/// encoding to the same bytes and refuses an edit made in the read-only reading.
#[test]
fn decode_of_a_wal_message_shows_its_reading_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (p, bytes) = write_dump(dir.path());
    let p = p.to_str().unwrap();
    let tree = stdout(&run(&["decode", "--type", T, p]));
    let reading =
        tree.split_once("WAL reading").map(|(_, r)| r.to_string()).expect("a reading after the tree");
    for want in [
        "type            Insert (2), version 1",
        "message id      RocksMQ 1007 (raw rz)",
        &format!("vchannel        {VCHANNEL}"),
        "payload as milvus.proto.msg.InsertRequest",
        "collectionID: 4491",
        "num_rows: 2",
    ] {
        assert!(reading.contains(want), "{want:?} in {reading}");
    }
    assert!(reading.contains(" UTC"), "the timetick as UTC: {reading}");

    let json = stdout(&run(&["decode", "--type", T, "--format", "json", p]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["wal"]["type"], "Insert");
    assert_eq!(v["wal"]["body"]["num_rows"], "2", "proto field names, as jq users write them: {v}");
    assert_eq!(v["wal"]["vchannel"], VCHANNEL);
    assert_eq!(v["wal"]["time_utc"], "2753-02-06 04:00:58.674", "the timetick as UTC: {v}");
    assert!(v["message"]["payload"].is_string(), "the message as stored stays: {v}");
    // The reading is checked, not encoded: the JSON still encodes to the same bytes...
    let back = run_stdin(&["encode", "--type", T, "--from", "json", "-"], json.as_bytes());
    assert_eq!(back.stdout, bytes, "{}", String::from_utf8_lossy(&back.stderr));
    // ...and an edit made under `wal` is refused in words, never dropped silently.
    let mut edited = v.clone();
    edited["wal"]["body"]["num_rows"] = serde_json::json!("7");
    let refused = run_stdin(&["encode", "--type", T, "--from", "json", "-"], edited.to_string().as_bytes());
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("read-only") && said.contains("delete \"wal\""), "{said}");

    let text = stdout(&run(&["decode", "--type", T, "--format", "text", p]));
    assert!(text.contains("# WAL reading"), "{text}");
    assert!(text.contains("# payload as milvus.proto.msg.InsertRequest:"), "{text}");
    assert!(text.contains("#   num_rows: 2"), "{text}");
    let from_text = run_stdin(&["encode", "--type", T, "--from", "text", "-"], text.as_bytes());
    assert_eq!(from_text.stdout, bytes, "the comments are skipped");

    // The ImmutableMessage alone reads the same.
    let imm = dir.path().join("imm.bin");
    let resp = SchemaSet::builtin().message(T).unwrap();
    let m = prost_reflect::DynamicMessage::decode(resp, bytes.as_slice()).unwrap();
    let inner = m.get_field_by_name("message").unwrap().as_message().unwrap().clone();
    std::fs::write(&imm, codec::encode(&inner)).unwrap();
    let tree = stdout(&run(&["decode", "--type", "ImmutableMessage", imm.to_str().unwrap()]));
    assert!(tree.contains("payload as milvus.proto.msg.InsertRequest"), "{tree}");
}

/// `inspect --jsonl` rows carry the header and body as objects: `jq '.body.num_rows'` works.
#[test]
fn inspect_rows_carry_header_and_body_objects() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("s.dump");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/milvus-100.dump"), &dump)
        .unwrap();
    let rows = stdout(&run(&["inspect", dump.to_str().unwrap(), "--jsonl", "--filter", "type=Insert"]));
    let (mut bodies, mut encrypted) = (0, 0);
    for line in rows.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r.get("frame").is_none() {
            continue;
        }
        assert!(r["header"]["collection_id"].is_string(), "{r}");
        match r.get("body") {
            Some(b) => {
                bodies += 1;
                assert_eq!(b["num_rows"], r["header"]["partitions"][0]["rows"], "{r}");
                assert!(r["message"]["message"]["payload"].is_string(), "the raw message stays: {r}");
            }
            None => {
                encrypted += 1;
                assert!(r["body_not_decoded"].as_str().is_some_and(|w| w.contains("encrypted")), "{r}");
            }
        }
    }
    assert!(bodies > 10 && encrypted > 0, "{bodies} bodies, {encrypted} encrypted");
    // --no-body leaves the body out (and says nothing about it), the header stays.
    let lean =
        stdout(&run(&["inspect", dump.to_str().unwrap(), "--jsonl", "--filter", "type=Insert", "--no-body"]));
    for line in lean.lines().filter(|l| l.contains("\"frame\"")) {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(r.get("body").is_none() && r.get("body_not_decoded").is_none(), "{r}");
        assert!(r["header"]["collection_id"].is_string(), "{r}");
    }
    assert!(lean.len() * 2 < rows.len(), "the rows without bodies are much smaller");
    // export --to jsonl writes the same rows.
    let out = dir.path().join("rows.jsonl");
    stdout(&run(&[
        "export",
        dump.to_str().unwrap(),
        "--to",
        "jsonl",
        "--out",
        out.to_str().unwrap(),
        "--filter",
        "type=Insert",
    ]));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().lines().count(),
        rows.lines().filter(|l| l.contains("\"frame\"")).count()
    );
}
