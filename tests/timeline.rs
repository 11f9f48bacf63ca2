//! The timeline of a salvage folder (issue #40, items 2 and 4), headless: lanes per pchannel
//! on one axis, transactions as spans (an open one open), DDL markers, a gap where messages are
//! missing, damaged ranges from a dump with garbage and one cut short, bins that add up to the
//! frames, the filters, the replay plan overlaid, and `walscope timeline --jsonl`.

use crate::common::timeline::{GAP_FROM_MS, GAP_TO_MS, GARBAGE, Made, make};
use std::collections::BTreeMap;
use walscope::replay::plan::{CollectionPlan, PlanOptions};
use walscope::replay::units::FrameAt;
use walscope::replay::{Op, Pk, Plan, SavedPlan, SkipReason, Skipped, Unit};
use walscope::schema::SchemaSet;
use walscope::sim::walgen::START_MS;
use walscope::timeline::{Filter, LoadOptions, PlanWhat, Timeline, TxnEnd, load};
use walscope::wal::TypeCategory;

fn folder() -> (tempfile::TempDir, Made, Timeline) {
    let dir = tempfile::tempdir().expect("temp dir");
    let made = make(dir.path(), 4000);
    let t = load(dir.path(), &LoadOptions::default(), &mut |_, _, _| true).expect("loads");
    (dir, made, t)
}

/// The type number of each name the schema knows.
fn numbers() -> BTreeMap<String, i32> {
    let set = SchemaSet::builtin();
    let e = set.pool().get_enum_by_name(walscope::wal::types::MESSAGE_TYPE_ENUM).expect("enum");
    e.values().map(|v| (v.name().to_string(), v.number())).collect()
}

#[test]
fn every_pchannel_is_a_lane_on_one_axis() {
    let (_d, made, t) = folder();
    let names: Vec<&str> = t.lanes.iter().map(|l| l.pchannel.as_str()).collect();
    assert_eq!(names, made.pchannels.iter().map(String::as_str).collect::<Vec<_>>());
    for (k, l) in t.lanes.iter().enumerate() {
        let msgs = &made.messages[k];
        assert_eq!(l.len(), msgs.len(), "{}", l.pchannel);
        assert!(l.tt.windows(2).all(|w| w[0] <= w[1]), "sorted by timetick");
        // Each place names its frame: the message written there has that timetick.
        for i in (0..l.len()).step_by(97) {
            assert_eq!(msgs[l.frame[i] as usize].timetick, l.tt[i]);
        }
    }
    let (first, last) = t.span().expect("a span");
    assert_eq!(first, made.messages.iter().map(|m| m[0].timetick).min().unwrap());
    assert_eq!(last, made.messages.iter().filter_map(|m| m.last()).map(|m| m.timetick).max().unwrap());
    assert_eq!(t.summary().frames, made.messages.iter().map(|m| m.len() as u64).sum::<u64>());
}

#[test]
fn transactions_are_spans_and_the_unfinished_one_is_open() {
    let (_d, made, t) = folder();
    for k in 1..4 {
        let count = |name: &str| made.messages[k].iter().filter(|m| m.type_name == name).count();
        let spans: Vec<_> = t.txns.iter().filter(|s| s.lane == k).collect();
        let by = |e: TxnEnd| spans.iter().filter(|s| s.end == e).count();
        assert_eq!(by(TxnEnd::Committed), count("CommitTxn"), "lane {k}");
        assert_eq!(by(TxnEnd::RolledBack), count("RollbackTxn"), "lane {k}");
        assert_eq!(by(TxnEnd::Open), usize::from(k == 2), "lane {k}");
        assert!(spans.iter().all(|s| s.begin_tt <= s.end_tt && s.has_begin), "lane {k}");
    }
    assert!(t.txns.iter().filter(|s| s.end == TxnEnd::Committed).count() > 10);
    assert!(t.txns.iter().any(|s| s.end == TxnEnd::RolledBack), "the generator rolls some back");
    let open = t.txns.iter().find(|s| s.lane == 2 && s.end == TxnEnd::Open).expect("the open one");
    let last_begin = made.messages[2].iter().rfind(|m| m.type_name == "BeginTxn").expect("a begin");
    assert_eq!(open.begin_tt, last_begin.timetick);
    assert_eq!(open.end_tt, made.messages[2].last().unwrap().timetick.max(open.begin_tt));
}

#[test]
fn ddl_markers_say_their_type() {
    let (_d, made, t) = folder();
    let numbers = numbers();
    for k in 0..4 {
        let want: Vec<&str> = made.messages[k]
            .iter()
            .filter(|m| TypeCategory::of(numbers[m.type_name]) == TypeCategory::Ddl)
            .map(|m| m.type_name)
            .collect();
        let got: Vec<&str> = t.ddl.iter().filter(|d| d.lane == k).map(|d| d.label.as_str()).collect();
        assert_eq!(got, want, "lane {k}");
    }
    assert!(t.ddl.iter().any(|d| d.label == "CreateCollection" && d.collection.is_some()));
}

#[test]
fn a_gap_is_where_messages_are_missing() {
    let (_d, _made, t) = folder();
    assert_eq!(t.gaps.len(), 1, "{:?}", t.gaps);
    let g = &t.gaps[0];
    assert_eq!(g.lane, 0);
    assert!((g.from_tt >> 18) < START_MS + GAP_FROM_MS && (g.to_tt >> 18) >= START_MS + GAP_TO_MS, "{g:?}");
    assert!(g.millis() >= GAP_TO_MS - GAP_FROM_MS);
    assert_eq!(t.lanes[0].gap_threshold_ms, walscope::timeline::GAP_MIN_MS);
}

#[test]
fn damaged_ranges_come_from_the_index() {
    let (_d, made, t) = folder();
    let garbage: Vec<_> = t.damage.iter().filter(|d| d.lane == 1).collect();
    assert_eq!(garbage.len(), 1, "{garbage:?}");
    let g = garbage[0];
    assert_eq!((g.offset, g.len, g.truncated), (made.garbage_at, GARBAGE as u64, false));
    let half = made.messages[1].len() / 2;
    assert_eq!(g.from_tt, Some(made.messages[1][half - 1].timetick));
    assert_eq!(g.to_tt, Some(made.messages[1][half].timetick));
    let cut: Vec<_> = t.damage.iter().filter(|d| d.lane == 3).collect();
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert!(cut[0].truncated && cut[0].offset == made.cut_at && cut[0].to_tt.is_none());
    assert_eq!(t.damage.len(), 2);
}

#[test]
fn bins_add_up_to_the_frames() {
    let (_d, _made, t) = folder();
    let (a, b) = t.span().unwrap();
    for l in &t.lanes {
        for n in [1, 7, 300, 5000] {
            let bins = l.bins(a, b + 1, n, &Filter::default());
            assert_eq!(bins.len(), n);
            assert_eq!(bins.iter().map(|x| x.total() as usize).sum::<usize>(), l.len(), "{n} bins");
            for c in TypeCategory::ALL {
                let want = l.cat.iter().filter(|&&x| x as usize == c.index()).count();
                assert_eq!(bins.iter().map(|x| x.count(c) as usize).sum::<usize>(), want);
            }
        }
        // A part of the range: the frames in it.
        let (from, to) = (a + (b - a) / 3, a + (b - a) / 2);
        let part = l.bins(from, to, 13, &Filter::default());
        assert_eq!(part.iter().map(|x| x.total() as usize).sum::<usize>(), l.range(from, to).len());
    }
}

#[test]
fn filters_keep_one_collection_or_type() {
    let (_d, _made, t) = folder();
    let (a, b) = t.span().unwrap();
    let c = t.collections()[0];
    let insert = t.type_number("insert").expect("Insert is a type");
    for filter in
        [Filter { collection: Some(c), types: vec![] }, Filter { collection: None, types: vec![insert] }]
    {
        let mut kept = 0;
        for l in &t.lanes {
            let want = (0..l.len()).filter(|&i| l.keeps(i, &filter)).count();
            let bins = l.bins(a, b + 1, 50, &filter);
            assert_eq!(bins.iter().map(|x| x.total() as usize).sum::<usize>(), want);
            kept += want;
        }
        assert!(kept > 0 && kept < t.summary().frames as usize, "{filter:?}");
        assert!(t.ddl_kept(&filter).all(|d| t.lanes[d.lane].keeps(d.at, &filter)));
    }
    let one = Filter { collection: Some(c), types: vec![] };
    assert!(t.txns_kept(&one).all(|s| s.collection == Some(c)));
    assert!(t.txns_kept(&one).count() < t.txns.len());
}

#[test]
fn the_saved_replay_plan_is_overlaid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let made = make(dir.path(), 2000);
    let (p0, p1) = (made.pchannels[0].clone(), made.pchannels[1].clone());
    let (m0, m1) = (&made.messages[0][10], &made.messages[1][20]);
    let at = FrameAt { dump: 0, offset: 0, len: 1 };
    let insert = |keys: Vec<i64>| Op::Insert {
        db: "default".into(),
        collection: "orders".into(),
        partition: String::new(),
        at,
        rows: keys.len() as u64,
        keys: keys.into_iter().map(Pk::Int).collect(),
    };
    let unit = |key: &str, p: &str, tt: u64, keys| Unit {
        key: key.into(),
        message: format!("id-{key}"),
        pchannel: p.into(),
        tt,
        txn: None,
        ops: vec![insert(keys)],
    };
    let mut collections = BTreeMap::new();
    collections
        .insert("orders".to_string(), CollectionPlan { conflicts: vec![Pk::Int(2)], ..Default::default() });
    let plan = Plan {
        endpoint: "127.0.0.1:19530".into(),
        db: "default".into(),
        created_at: "2026-12-06T00:00:00.000Z".into(),
        options: PlanOptions::default(),
        dumps: vec![],
        units: vec![unit("a", &p0, m0.timetick, vec![1]), unit("b", &p1, m1.timetick, vec![2, 3])],
        skipped: vec![Skipped {
            pchannel: p1.clone(),
            message_id: "id-c".into(),
            tt: m1.timetick + 1,
            type_name: "Insert".into(),
            reason: SkipReason::Encrypted,
            collection: Some("orders".into()),
            detail: None,
        }],
        collections,
        problems: vec![],
        warnings: vec![],
        fingerprint: "f".into(),
    };
    SavedPlan::save(dir.path(), &plan).expect("saved");
    let t = load(dir.path(), &LoadOptions::default(), &mut |_, _, _| true).expect("loads");
    assert_eq!(t.plan.len(), 3, "{:?}", t.plan);
    assert_eq!((t.plan[0].lane, t.plan[0].tt, t.plan[0].what.kind()), (0, m0.timetick, "sent"));
    assert_eq!((t.plan[1].lane, t.plan[1].what.kind()), (1, "conflict"));
    assert!(matches!(&t.plan[1].what, PlanWhat::Conflict { keys, .. } if keys == &["2".to_string()]));
    assert_eq!((t.plan[2].lane, t.plan[2].what.kind()), (1, "skipped"));
    assert!(t.plan[2].what.words().contains("encrypted"), "{}", t.plan[2].what.words());
    assert!(t.plan_file.as_ref().is_some_and(|p| p.ends_with("replay-plan.json")));
}

#[test]
fn the_cli_lists_the_timeline_as_json_lines() {
    let (dir, made, t) = folder();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["timeline", dir.path().to_str().unwrap(), "--jsonl", "--bins", "4"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let of = |kind: &str| lines.iter().filter(|v| v["kind"] == kind).collect::<Vec<_>>();
    let lanes = of("lane");
    assert_eq!(lanes.len(), 4);
    assert_eq!(lanes[0]["pchannel"], made.pchannels[0].as_str());
    assert_eq!(of("txn").len(), t.txns.len());
    assert_eq!(of("ddl").len(), t.ddl.len());
    assert_eq!(of("gap").len(), 1);
    assert_eq!(of("damage").len(), 2);
    assert_eq!(of("bin").len(), 16);
    let bins: u64 = of("bin").iter().map(|b| b["total"].as_u64().unwrap()).sum();
    let summary = of("summary");
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0]["frames"].as_u64(), Some(bins));
    // Times in the one pattern, beside the raw timetick.
    let first = &lanes[0]["first"];
    let tt = first["tt"].as_u64().unwrap();
    assert_eq!(first["utc"], walscope::time::format_timetick(tt).as_str());
    assert_eq!(lines.last().unwrap()["kind"], "summary");

    // A filter, the human summary, and an error in words.
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_walscope")).args(args).output().unwrap()
    };
    let d = dir.path().to_str().unwrap();
    let o = run(&["timeline", d, "--jsonl", "--type", "Insert"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success() && text.lines().any(|l| l.contains("\"summary\"")));
    let o = run(&["timeline", d]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains(&made.pchannels[2]) && text.contains("1 open"), "{text}");
    let o = run(&["timeline", d, "--type", "NoSuchType"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("not a WAL message type"));
    let o = run(&["timeline", "/nonexistent/salvage"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("not a folder"));
}
