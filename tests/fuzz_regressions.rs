//! Fuzz regressions: every input saved under `tests/fuzz-regressions/<target>/` (crashes and
//! hangs the cargo-fuzz targets in `fuzz/` found, and hand-made hostile inputs) is run through
//! the property of the target of that name.
//!
//! The properties are written here, in module [`props`], against the public walscope API only,
//! so this test builds without the fuzz crate. The fuzz targets include this file (`#[path]`),
//! so a target and its regression test can never drift apart. See `fuzz/README.md`.

#![allow(dead_code)]

pub mod props {
    use bytes::{Bytes, BytesMut};
    use futures::future::BoxFuture;
    use prost_reflect::{DynamicMessage, Kind, MessageDescriptor};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, OnceLock};
    use std::time::Duration;
    use walscope::codec::path::{Segment, Selector};
    use walscope::codec::{self, Edit, EditOp, FieldPath};
    use walscope::dump::view::FrameDecoder;
    use walscope::dump::{DumpFile, Framing, IndexCache, Manifest, OpenOptions};
    use walscope::net::brpc::codec::{Packet, decode_meta, encode_packet, take_packet};
    use walscope::net::brpc::server::{BrpcServer, BrpcService, RpcResult};
    use walscope::net::http_json::HttpJsonTransport;
    use walscope::net::{CallOptions, NetError, Transport};
    use walscope::salvage::FolderManifest;
    use walscope::schema::{Origin, SchemaSet};
    use walscope::sim::{WalGenConfig, WalGenerator};
    use walscope::wal::{self, RowFacts, SummaryReader};
    use walscope::wire::{self, DecodeOptions, Span, WireContent, WireDecoding, WireMessage};

    pub const RESPONSE: &str = "milvus.proto.milvus.DumpMessagesResponse";
    pub const IMMUTABLE: &str = "milvus.proto.common.ImmutableMessage";
    pub const INSERT: &str = "milvus.proto.msg.InsertRequest";
    pub const ADD_SYNC_TASK: &str = "openmldb.datasync.AddSyncTaskRequest";
    pub const TASK_STATUS: &str = "openmldb.datasync.TaskStatusResponse";
    /// The types the typed targets read outside bytes and text as.
    pub const TYPED: [&str; 5] = [RESPONSE, IMMUTABLE, INSERT, ADD_SYNC_TASK, TASK_STATUS];

    /// A target's property: panics when the input breaks it.
    pub type Property = fn(&[u8]);

    /// Every target, by the name of its fuzz target and of its regression directory.
    pub const TARGETS: &[(&str, Property)] = &[
        ("wire_decode", wire_decode),
        ("typed_decode", typed_decode),
        ("lossless_edit", lossless_edit),
        ("dump_reader", dump_reader),
        ("summary_reader", summary_reader),
        ("brpc_client", brpc_client),
        ("brpc_server", brpc_server),
        ("http_json", http_json),
        ("proto_loader", proto_loader),
        ("descriptor_set", descriptor_set),
        ("text_input", text_input),
        ("manifest", manifest),
    ];

    pub fn set() -> &'static SchemaSet {
        SchemaSet::shared_builtin()
    }

    pub fn message(name: &str) -> MessageDescriptor {
        set().message(name).unwrap()
    }

    /// A scratch directory of this process (targets that read files write the input there).
    fn scratch(sub: &str) -> PathBuf {
        static DIR: OnceLock<PathBuf> = OnceLock::new();
        let dir =
            DIR.get_or_init(|| std::env::temp_dir().join(format!("walscope-fuzz-{}", std::process::id())));
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    // ---- wire_decode: never panics; every span lies inside the input (and inside its parent).

    pub fn wire_decode(data: &[u8]) {
        check_decoding(&wire::decode(data), data.len());
        for name in [IMMUTABLE, RESPONSE, ADD_SYNC_TASK, INSERT] {
            let opts = DecodeOptions { schema: Some(message(name)), ..DecodeOptions::default() };
            check_decoding(&wire::decode_with(data, &opts), data.len());
        }
        let shallow = DecodeOptions { max_depth: 2, schema: Some(message(RESPONSE)) };
        check_decoding(&wire::decode_with(data, &shallow), data.len());
    }

    fn inside(s: &Span, outer: &Span, what: &str) {
        assert!(
            s.start <= s.end && outer.start <= s.start && s.end <= outer.end,
            "{what} span {s:?} is not inside {outer:?}"
        );
    }

    fn check_decoding(d: &WireDecoding, len: usize) {
        let all = 0..len;
        check_message(&d.root, &all);
        for e in &d.errors {
            assert!(e.offset <= len, "error offset {} beyond the {len}-byte input: {e}", e.offset);
        }
    }

    fn check_message(m: &WireMessage, parent: &Span) {
        inside(&m.span, parent, "message");
        if let Some(t) = &m.raw_tail {
            inside(t, &m.span, "raw tail");
        }
        for f in &m.fields {
            inside(&f.key, &m.span, "key");
            if let Some(p) = &f.len_prefix {
                inside(p, &m.span, "length prefix");
            }
            inside(&f.value, &m.span, "value");
            inside(&f.whole(), &m.span, "whole field");
            match &f.content {
                WireContent::Message { message, .. } => check_message(message, &f.value),
                WireContent::Group { message, end_key } => {
                    check_message(message, &f.value);
                    if let Some(k) = end_key {
                        inside(k, &m.span, "end-group key");
                    }
                }
                WireContent::Packed(p) => {
                    p.spans().iter().for_each(|s| inside(s, &f.value, "packed element"))
                }
                _ => {}
            }
        }
    }

    // ---- typed_decode: a successful decode re-encodes and re-decodes to an equal message, and
    // (without unknown fields, which JSON and text cannot carry) survives JSON and text.

    pub fn typed_decode(data: &[u8]) {
        for name in TYPED {
            let desc = message(name);
            // Decoding without the wire tree gives the same message, or the same error in words.
            // Messages are compared by their canonical encoding: a NaN float is not equal to
            // itself, so `==` on two decodes of the same NaN-holding bytes is false.
            let full = codec::decode(&desc, data);
            let full_encoded = full.as_ref().map(|d| codec::encode(&d.message)).map_err(|e| e.to_string());
            let alone = codec::decode_message(&desc, data);
            assert_eq!(
                alone.as_ref().map(codec::encode).map_err(|e| e.to_string()),
                full_encoded,
                "{name}: decode_message and decode disagree"
            );
            let (Ok(d), Ok(canonical)) = (full, full_encoded) else { continue };
            let again = codec::decode(&desc, &canonical)
                .unwrap_or_else(|e| panic!("{name}: the canonical re-encoding does not decode: {e}"));
            assert_eq!(codec::encode(&again.message), canonical, "{name}: re-decoded message differs");
            let json = codec::to_json(&d.message, false);
            if codec::count_unknown(&d.message) == 0 {
                let back = codec::from_json(&desc, &json)
                    .unwrap_or_else(|e| panic!("{name}: to_json output does not read back: {e}\n{json}"));
                assert_eq!(codec::encode(&back), canonical, "{name}: the JSON round trip changed it: {json}");
                let text = codec::to_text(&d.message);
                let mut written = Vec::new();
                codec::write_text(&d.message, &mut written).expect("writing to a Vec cannot fail");
                assert_eq!(
                    String::from_utf8(written).ok().as_deref(),
                    Some(text.as_str()),
                    "{name}: write_text"
                );
                let back = codec::from_text(&desc, &text)
                    .unwrap_or_else(|e| panic!("{name}: to_text output does not read back: {e}\n{text}"));
                assert_eq!(codec::encode(&back), canonical, "{name}: the text round trip changed it: {text}");
            }
        }
    }

    // ---- lossless_edit: an accepted edit decodes, and fields off the edit path keep their bytes.

    fn ld(key: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![key, body.len() as u8];
        v.extend_from_slice(body);
        v
    }

    /// A `Task` no canonical encoder would write (as in tests/lossless_edit.rs).
    fn odd_task(offset: &[u8]) -> Vec<u8> {
        let mut sync_point = vec![0x08, 0x01, 0x20];
        sync_point.extend_from_slice(offset);
        let mut progress = ld(0x2a, &sync_point);
        progress.extend_from_slice(&[0x08, 0x07]);
        progress.extend_from_slice(&[0x7d, 1, 2, 3, 4]);
        let mut t = ld(0x22, b"RUNNING");
        t.extend_from_slice(&[0x98, 0x06, 0x05]);
        t.extend_from_slice(&[0x18, 0x85, 0x80, 0x00]);
        t.extend(ld(0x0a, &progress));
        t.extend(ld(0x12, b"127.0.0.1:8888"));
        t
    }

    /// The messages edits are made to: generated WAL frames, their inner messages, odd datasync
    /// messages and a packed InsertRequest.
    pub fn edit_bases() -> &'static [(MessageDescriptor, Vec<u8>)] {
        static BASES: OnceLock<Vec<(MessageDescriptor, Vec<u8>)>> = OnceLock::new();
        BASES.get_or_init(|| {
            let mut out = Vec::new();
            let cfg = WalGenConfig { seed: 3, total: Some(12), ..WalGenConfig::default() };
            for m in WalGenerator::new(set().pool(), cfg).take(12) {
                let d = wire::decode(&m.response);
                if let Some(f) = d.root.fields.iter().find(|f| f.number == 2) {
                    out.push((message(IMMUTABLE), m.response[f.value.clone()].to_vec()));
                }
                out.push((message(RESPONSE), m.response));
            }
            let task = odd_task(&[0xe8, 0x07]);
            let mut status = ld(0x12, &task);
            status.extend(ld(0x0a, &[0x08, 0x00]));
            status.extend(ld(0x12, &ld(0x22, b"INIT")));
            status.extend(ld(0x12, &ld(0x22, b"FAILED")));
            status.extend(ld(0x1a, b"lastUpdateTime=1"));
            out.push((message("openmldb.datasync.Task"), task));
            out.push((message(TASK_STATUS), status));
            let mut insert = vec![0xf8, 0x07, 0x09];
            insert.extend(ld(0x52, &[1, 2, 3]));
            insert.extend(ld(0x22, b"coll"));
            out.push((message(INSERT), insert));
            out.push((message(ADD_SYNC_TASK), Vec::new()));
            out
        })
    }

    /// Input: byte 0 picks the message, byte 1 the operation (and a move's distance), the rest
    /// is UTF-8 `PATH=VALUE` (`PATH` for clear and move).
    pub fn lossless_edit(data: &[u8]) {
        let [b0, b1, rest @ ..] = data else { return };
        let Ok(text) = std::str::from_utf8(rest) else { return };
        let bases = edit_bases();
        let (desc, before) = &bases[usize::from(*b0) % bases.len()];
        let (path, value) = text.split_once('=').unwrap_or((text, ""));
        let Ok(path) = FieldPath::parse(path.trim()) else { return };
        let op = match b1 % 4 {
            0 => EditOp::Set(value.to_string()),
            1 => EditOp::Append(value.to_string()),
            2 => EditOp::Clear,
            _ => EditOp::Move(i64::from((*b1 as i8) >> 2)),
        };
        let edit = Edit { path, op };
        let Ok(after) = codec::apply_edits(desc, before, std::slice::from_ref(&edit)) else { return };
        if let Err(e) = codec::decode(desc, &after) {
            panic!("{}: the accepted edit {edit:?} does not decode: {e}", desc.full_name());
        }
        untouched(desc, before, &after, &edit.path.0, &edit);
    }

    /// Whole fields (key through value) of `bytes` that `touched` leaves out, in order.
    fn fields_except(bytes: &[u8], touched: &dyn Fn(u32) -> bool) -> Vec<(u32, Vec<u8>)> {
        let d = wire::decode(bytes);
        assert!(d.root.raw_tail.is_none(), "{:?} is not clean protobuf", bytes);
        d.root
            .fields
            .iter()
            .filter(|f| !touched(f.number))
            .map(|f| (f.number, bytes[f.whole()].to_vec()))
            .collect()
    }

    fn occurrences(bytes: &[u8], number: u32) -> Vec<Span> {
        wire::decode(bytes)
            .root
            .fields
            .iter()
            .filter(|f| f.number == number && f.len_prefix.is_some())
            .map(|f| f.value.clone())
            .collect()
    }

    fn untouched(desc: &MessageDescriptor, before: &[u8], after: &[u8], segs: &[Segment], edit: &Edit) {
        let Some(seg) = segs.first() else { return };
        let Some(fd) = desc.get_field_by_name(&seg.field).or_else(|| desc.get_field_by_json_name(&seg.field))
        else {
            return;
        };
        let oneof = fd.containing_oneof();
        let touched =
            |n: u32| n == fd.number() || oneof.as_ref().is_some_and(|o| o.fields().any(|f| f.number() == n));
        assert_eq!(
            fields_except(before, &touched),
            fields_except(after, &touched),
            "{}: edit {edit:?} changed fields off its path",
            desc.full_name()
        );
        let Kind::Message(sub) = fd.kind() else { return };
        if segs.len() < 2 || fd.is_map() {
            return;
        }
        let (b, a) = (occurrences(before, fd.number()), occurrences(after, fd.number()));
        let picked = match (&seg.selector, fd.is_list()) {
            (None, false) if b.len() == 1 && a.len() == 1 => 0,
            (Some(Selector::Index(i)), true) if b.len() == a.len() => {
                let n = b.len() as i64;
                let i = if *i < 0 { n + i } else { *i };
                if !(0..n).contains(&i) {
                    return;
                }
                for j in (0..b.len()).filter(|j| *j as i64 != i) {
                    assert_eq!(
                        before[b[j].clone()],
                        after[a[j].clone()],
                        "edit {edit:?} changed element {j}"
                    );
                }
                i as usize
            }
            _ => return,
        };
        untouched(&sub, &before[b[picked].clone()], &after[a[picked].clone()], &segs[1..], edit);
    }

    // ---- dump_reader: with detection and with each framing, the fast summary reader gives the
    // same views as the full analysis, frame by frame.

    fn decoders() -> &'static (FrameDecoder, FrameDecoder) {
        static D: OnceLock<(FrameDecoder, FrameDecoder)> = OnceLock::new();
        D.get_or_init(|| {
            let desc = message(RESPONSE);
            let fast = FrameDecoder::new(set().pool().clone(), Some(desc.clone()), 4);
            let slow = FrameDecoder::new(set().pool().clone(), Some(desc), 4).without_fast_summaries();
            assert!(fast.has_fast_summaries());
            (fast, slow)
        })
    }

    fn compare_views(d: &DumpFile, how: &str) {
        d.wait_indexed();
        let _ = d.problems();
        let (fast, slow) = decoders();
        for i in 0..d.frame_count() {
            if let Some(loc) = d.frame(i) {
                assert!(loc.end() <= d.len(), "{how}: frame {i} ends at {} beyond {}", loc.end(), d.len());
                let (start, m) = d.message_bytes(&loc);
                assert!(
                    start >= loc.offset && start + m.len() as u64 <= loc.end(),
                    "{how}: frame {i} message"
                );
            }
            let (a, b) = (fast.view_uncached(d, i), slow.view_uncached(d, i));
            assert_eq!(a, b, "{how}: frame {i}: the fast summary differs from the full analysis");
        }
    }

    pub fn dump_reader(data: &[u8]) {
        // Eight opens of every input, each frame viewed twice: past 8 KiB an input can take over
        // the 1-second timeout under ASan on a loaded machine without showing anything new.
        let data = &data[..data.len().min(8 << 10)];
        let desc = message(RESPONSE);
        for framing in std::iter::once(None).chain(Framing::ALL.map(Some)) {
            let opts = OpenOptions {
                framing,
                message_type: Some(desc.clone()),
                index_cache: IndexCache::Off,
                ..OpenOptions::default()
            };
            let d = DumpFile::from_bytes("fuzz.dump", data.to_vec(), opts);
            compare_views(&d, &format!("{framing:?}"));
        }
        // From a file: text encodings (hex, base64) are sniffed only there.
        let path = scratch("dump").join("fuzz.dump");
        std::fs::write(&path, data).unwrap();
        let opts =
            OpenOptions { message_type: Some(desc), index_cache: IndexCache::Off, ..OpenOptions::default() };
        if let Ok(d) = DumpFile::open(&path, opts) {
            compare_views(&d, "opened file");
        }
    }

    // ---- summary_reader: when the fast reader answers, the full analysis agrees.

    /// The facts the full analysis gives for a frame, if it has no problem at all (as
    /// `full_facts` in tests/fast_summaries.rs).
    pub fn full_facts(frame: &[u8]) -> Option<RowFacts> {
        let decoded = codec::decode(&message(RESPONSE), frame).ok()?.message;
        if decoded.has_field_by_name("status") || !decoded.has_field_by_name("message") {
            return None;
        }
        let imm = decoded.get_field_by_name("message")?.as_message()?.clone();
        let w = wal::analyze_row(set().pool(), &imm);
        w.problems.is_empty().then(|| w.row_facts())
    }

    pub fn summary_reader(data: &[u8]) {
        static R: OnceLock<SummaryReader> = OnceLock::new();
        let reader = R.get_or_init(|| SummaryReader::new(set().pool(), &message(RESPONSE)).unwrap());
        if let Some(facts) = reader.read(data) {
            assert_eq!(
                Some(&facts),
                full_facts(data).as_ref(),
                "the fast reader answered where the full analysis disagrees"
            );
        }
    }

    // ---- brpc_client: take_packet on the input fed in chunks; packets re-encode and take back
    // alike; chunking does not change what is taken.

    fn take_all(data: &[u8], chunk: usize) -> (Vec<Packet>, bool) {
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for piece in data.chunks(chunk.max(1)) {
            buf.extend_from_slice(piece);
            loop {
                match take_packet(&mut buf) {
                    Ok(Some(p)) => got.push(p),
                    Ok(None) => break,
                    Err(_) => return (got, true),
                }
            }
        }
        (got, false)
    }

    fn round_trip(p: &Packet) {
        assert_eq!(p.meta.attachment_size as usize, p.attachment.len(), "attachment size");
        let wire = encode_packet(&p.meta, &p.message, &p.attachment);
        let mut buf = BytesMut::from(&wire[..]);
        let q = take_packet(&mut buf)
            .unwrap_or_else(|e| panic!("a re-encoded packet does not take: {e}: {p:?}"))
            .expect("a re-encoded packet is whole");
        assert_eq!(&q, p, "the re-encoded packet takes back differently");
        assert!(buf.is_empty(), "bytes left after a re-encoded packet");
    }

    pub fn brpc_client(data: &[u8]) {
        let _ = decode_meta(data);
        let Some((&c, rest)) = data.split_first() else { return };
        let (whole, whole_err) = take_all(rest, rest.len());
        let (pieces, pieces_err) = take_all(rest, usize::from(c % 64) + 1);
        assert_eq!(whole, pieces, "chunking changed the packets taken");
        assert_eq!(whole_err, pieces_err, "chunking changed whether the stream fails");
        whole.iter().for_each(round_trip);
    }

    // ---- brpc_server: a real server on loopback (baidu_std and HTTP/JSON on one port) given the
    // input as a client's bytes: it never panics, always closes, and answers whole packets.

    struct Echo;
    impl BrpcService for Echo {
        fn call(&self, _service: String, method: String, message: Bytes, attachment: Bytes) -> RpcResult {
            Box::pin(async move {
                match method.as_str() {
                    "Fail" => Err((1002, "unknown method".into())),
                    _ => Ok((message.to_vec(), attachment.to_vec())),
                }
            })
        }
        fn http_json(
            &self,
            _service: String,
            _method: String,
            json: String,
        ) -> Option<BoxFuture<'static, Result<String, (u16, String)>>> {
            Some(Box::pin(async move { Ok(json) }))
        }
    }

    fn runtime() -> &'static tokio::runtime::Runtime {
        static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
        RT.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap())
    }

    pub fn brpc_server(data: &[u8]) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        static SERVER: OnceLock<BrpcServer> = OnceLock::new();
        let rt = runtime();
        let server = SERVER.get_or_init(|| {
            rt.block_on(BrpcServer::bind("127.0.0.1:0".parse().unwrap(), Arc::new(Echo))).unwrap()
        });
        let addr = server.addr();
        rt.block_on(async {
            let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else { return };
            let _ = s.write_all(data).await;
            let _ = s.shutdown().await;
            let mut out = Vec::new();
            let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
                .await
                .expect("the server never closed the connection");
            if read.is_err() || data.len() < 4 {
                return;
            }
            if data.starts_with(b"POST") || data.starts_with(b"GET ") {
                assert!(
                    out.starts_with(b"HTTP/1.1 "),
                    "an HTTP request got {:?}",
                    String::from_utf8_lossy(&out)
                );
                return;
            }
            let mut buf = BytesMut::from(&out[..]);
            while let Some(p) = take_packet(&mut buf).expect("the server answered a malformed packet") {
                assert!(p.meta.response.is_some(), "an answer without response meta: {p:?}");
            }
            assert!(buf.is_empty(), "the server's answer ends inside a packet");
        });
    }

    // ---- http_json: the HTTP/JSON client reading the input as a server's answer.

    pub fn http_json(data: &[u8]) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        static LISTENER: OnceLock<(tokio::net::TcpListener, std::net::SocketAddr)> = OnceLock::new();
        let rt = runtime();
        let (listener, addr) = LISTENER.get_or_init(|| {
            rt.block_on(async {
                let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let a = l.local_addr().unwrap();
                (l, a)
            })
        });
        let method = set()
            .pool()
            .get_service_by_name("openmldb.datasync.SyncTool")
            .and_then(|s| s.methods().find(|m| m.name() == "TaskStatus"))
            .unwrap();
        let request = DynamicMessage::new(method.input());
        let transport = HttpJsonTransport::new(addr.to_string());
        let opts = CallOptions { timeout: Some(Duration::from_secs(10)), ..CallOptions::default() };
        rt.block_on(async {
            let serve = async {
                let Ok((mut s, _)) = listener.accept().await else { return };
                // The whole request: head, then Content-Length bytes.
                let mut req = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    if let Some(end) = req.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&req[..end]).to_ascii_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if req.len() >= end + 4 + len {
                            break;
                        }
                    }
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => req.extend_from_slice(&chunk[..n]),
                    }
                }
                let _ = s.write_all(data).await;
                let _ = s.shutdown().await;
            };
            let call = transport.call_unary(&method, &request, &opts);
            let ((), reply) = futures::join!(serve, call);
            match reply {
                Ok(r) => {
                    let d = codec::decode(&method.output(), &r.bytes)
                        .unwrap_or_else(|e| panic!("the reply's bytes do not decode: {e}"));
                    assert_eq!(
                        codec::encode(&d.message),
                        codec::encode(&r.message),
                        "reply bytes and message differ"
                    );
                }
                Err(NetError::Timeout { .. }) => panic!("the client hung on a closed connection"),
                Err(_) => {}
            }
        });
    }

    // ---- proto_loader and descriptor_set: schema sources load or fail with an error.

    /// What the CLI does with a loaded set: list it, show every symbol of the new files, and
    /// write a template for each new message.
    fn use_set(set: &SchemaSet) {
        let _ = set.notices();
        let builtin = SchemaSet::shared_builtin();
        for (name, _, file) in set.symbols() {
            // Only the new files' symbols (by exact name: `SchemaSet::message` of a missing
            // name ranks every type for a suggestion, far too slow to ask per symbol).
            if builtin.origin_of_file(&file).is_some() || file.starts_with("google/protobuf/") {
                continue;
            }
            let _ = walscope::schema::describe(set, &name);
            if let Some(m) = set.pool().get_message_by_name(&name) {
                let _ = codec::template_json(&m);
            }
        }
    }

    pub fn proto_loader(data: &[u8]) {
        let dir = scratch("proto");
        let file = dir.join("fuzz.proto");
        std::fs::write(&file, data).unwrap();
        let mut set = SchemaSet::shared_builtin().clone();
        match set.add_proto_files(&[], &[file]) {
            Ok(_) => use_set(&set),
            Err(e) => drop(e.to_string()),
        }
    }

    pub fn descriptor_set(data: &[u8]) {
        for mut set in [SchemaSet::shared_builtin().clone(), SchemaSet::empty()] {
            match set.add_descriptor_set_bytes(data, Origin::DescriptorSet(PathBuf::from("fuzz.protoset"))) {
                Ok(_) => use_set(&set),
                Err(e) => drop(e.to_string()),
            }
        }
    }

    // ---- text_input: JSON and text format as each type, on any UTF-8.

    pub fn text_input(data: &[u8]) {
        let Ok(text) = std::str::from_utf8(data) else { return };
        for name in TYPED {
            let desc = message(name);
            if let Ok(m) = codec::from_json(&desc, text) {
                let _ = codec::to_json(&m, true);
                let _ = codec::encode(&m);
            }
            if let Ok(m) = codec::from_text(&desc, text) {
                let _ = codec::to_text(&m);
                let _ = codec::encode(&m);
            }
        }
    }

    // ---- manifest: dump and salvage-folder manifests load or fail; what loads writes back alike;
    // the check `inspect` and the window make (`dump::manifest_check`) uses only a manifest it
    // can vouch for, and says what is wrong in a few words.

    pub fn manifest(data: &[u8]) {
        let dir = scratch("manifest");
        let path = dir.join("fuzz.dump.manifest.json");
        std::fs::write(&path, data).unwrap();
        manifest_check(data, &dir);
        std::fs::write(&path, data).unwrap();
        if let Ok(m) = Manifest::load(&path) {
            std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
            let again = Manifest::load(&path).expect("a manifest walscope wrote reads back");
            assert_eq!(again, m, "the manifest changed on its way through a file");
        }
        std::fs::write(FolderManifest::path(&dir), data).unwrap();
        if let Ok(m) = FolderManifest::load(&dir) {
            std::fs::write(FolderManifest::path(&dir), serde_json::to_string(&m).unwrap()).unwrap();
            let again = FolderManifest::load(&dir).expect("a folder manifest walscope wrote reads back");
            assert_eq!(again, m, "the folder manifest changed on its way through a file");
        }
    }

    fn manifest_check(data: &[u8], dir: &Path) {
        use walscope::dump::manifest_check::{self as check, FileFacts, Finding, MAX_MANIFEST_BYTES};
        let parsed = check::parse(data);
        match &parsed {
            Ok(m) => {
                let back = check::parse(serde_json::to_string(m).unwrap().as_bytes());
                assert_eq!(back.as_ref(), Ok(m), "a manifest the check reads reads back alike");
                // The file it describes agrees with it; a complete one a frame off does not.
                if let Some(framing) = Framing::parse(&m.framing) {
                    let same = FileFacts { len: m.bytes, frames: Some(m.frames), framing, type_known: true };
                    assert_eq!(check::compare(m, &same), vec![], "the file it describes");
                    let off = FileFacts { frames: Some(m.frames.wrapping_add(1)), ..same };
                    let found = check::compare(m, &off);
                    assert_eq!(m.complete, matches!(found[..], [Finding::Frames { .. }]), "{found:?}");
                }
            }
            Err(f) => {
                assert!(f.set_aside(), "{f:?}");
                let words = f.to_string();
                assert!(words.len() < 600, "{} bytes of words: {words}", words.len());
            }
        }
        // Beside a real dump, through the reader.
        let dump = dir.join("fuzz.dump");
        std::fs::write(&dump, b"\x02\x08\x01\x02\x08\x02").unwrap();
        let opts = OpenOptions { index_cache: IndexCache::Off, ..OpenOptions::default() };
        let d = DumpFile::open(&dump, opts).expect("open the dump");
        d.wait_indexed();
        let c = check::check(&d).expect("a manifest is beside it");
        if data.len() as u64 <= MAX_MANIFEST_BYTES {
            assert_eq!(c.manifest.is_some(), parsed.is_ok(), "{:?}", c.findings);
        }
        assert_eq!(c.findings.iter().any(Finding::set_aside), c.manifest.is_none(), "{:?}", c.findings);
        for line in c.lines() {
            assert!(line.len() < 800, "{line}");
        }
    }

    pub fn run_dir(root: &Path) -> usize {
        let mut ran = 0;
        for (name, property) in TARGETS {
            let dir = root.join(name);
            let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
                Ok(r) => r.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect(),
                Err(_) => Vec::new(),
            };
            assert!(!files.is_empty(), "{} holds no input for target {name}", dir.display());
            files.sort();
            for f in files {
                let data = std::fs::read(&f).unwrap();
                eprintln!("{name}: {} ({} bytes)", f.display(), data.len());
                property(&data);
                ran += 1;
            }
        }
        ran
    }
}

#[test]
fn every_saved_input_keeps_its_targets_property() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    // No directory for a target that does not exist.
    for entry in std::fs::read_dir(&root).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            props::TARGETS.iter().any(|(t, _)| *t == name),
            "tests/fuzz-regressions/{name}: no such target"
        );
    }
    let ran = props::run_dir(&root);
    assert!(ran >= props::TARGETS.len());
}

/// Found by `descriptor_set`: a file whose `syntax` is neither proto2 nor proto3 ("editions",
/// even "") made prost-reflect panic (index out of bounds in `Label::new`) while building the
/// pool. Such files are now refused with an error, and the set is unchanged.
#[test]
fn a_descriptor_set_with_an_unknown_syntax_is_refused() {
    use walscope::schema::{Origin, SchemaSet};
    let ld = |n: u8, b: &[u8]| [&[n << 3 | 2, b.len() as u8][..], b].concat();
    for syntax in [&b"editions"[..], b"", b"proto4"] {
        let set_bytes = ld(1, &[ld(1, b"e.proto"), ld(12, syntax)].concat());
        let mut set = SchemaSet::builtin();
        let before = set.symbols().len();
        let e = set
            .add_descriptor_set_bytes(&set_bytes, Origin::DescriptorSet("e.protoset".into()))
            .unwrap_err()
            .to_string();
        // An editions file without an edition number is refused as an edition walscope does
        // not read (tests/schema_editions.rs has the editions it reads).
        let why = if syntax == b"editions" { "is not one walscope reads" } else { "is not supported" };
        assert!(e.contains("e.proto") && e.contains(why), "{e}");
        assert_eq!(set.symbols().len(), before);
    }
}
