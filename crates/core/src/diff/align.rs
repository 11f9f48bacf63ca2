//! How the elements of a repeated field on both sides are matched: by a key field where the
//! element type has one (see [`key_field`]), else by position with moves detected.
//!
//! Must never: take quadratic time on a big list (a million packed values): the longest common
//! subsequence is only worked out on the differing middle, and only when that is small.

use crate::codec::tree::TypedNode;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// One element's fate. Indexes are into the two element lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Byte-identical at the same place in the order.
    Same(usize, usize),
    /// The same element (same place, or same key) with different contents.
    Pair(usize, usize),
    /// Byte-identical, at another place in the order.
    Moved(usize, usize),
    Added(usize),
    Removed(usize),
}

impl Step {
    /// Whether this step keeps the list's shape: editing elements in place is enough.
    pub(super) fn in_place(self) -> bool {
        matches!(self, Step::Same(i, j) | Step::Pair(i, j) if i == j)
    }
}

/// The names a key field of a repeated message may have, in the order they are tried: the
/// first one the element type has as a single scalar field is its key (`FieldSchema.fieldID`,
/// `FieldData.field_id`, `KeyValuePair.key`, a `name`).
pub const KEY_FIELDS: [&str; 6] = ["field_id", "fieldID", "id", "ID", "key", "name"];

/// The key field of a repeated message field's element type, if it has one.
pub(super) fn key_field(elem: &prost_reflect::MessageDescriptor) -> Option<String> {
    KEY_FIELDS.iter().find_map(|k| {
        let fd = elem.get_field_by_name(k)?;
        let scalar = !fd.is_list() && !fd.is_map() && !matches!(fd.kind(), prost_reflect::Kind::Message(_));
        scalar.then(|| k.to_string())
    })
}

/// The most cells of the common-subsequence table worked out (beyond: pairs by position).
const LCS_CELLS: usize = 1 << 20;

fn whole<'b>(buf: &'b [u8], n: &TypedNode) -> &'b [u8] {
    buf.get(n.whole()).unwrap_or(&[])
}

fn hash_of(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Matches elements `a` (in buffer `ab`) with `b` (in `bb`); `key` names the key field of
/// message elements. The steps come in B's order, removed elements where they stood.
pub(super) fn align(
    ab: &[u8],
    a: &[&TypedNode],
    bb: &[u8],
    b: &[&TypedNode],
    key: Option<&str>,
) -> Vec<Step> {
    if let Some(k) = key
        && let Some(steps) = by_key(ab, a, bb, b, k)
    {
        return steps;
    }
    by_position(ab, a, bb, b)
}

fn key_of(n: &TypedNode, key: &str) -> String {
    n.children.iter().rev().find(|c| c.label == key).and_then(|c| c.value.clone()).unwrap_or_default()
}

/// Alignment by key: None when a key repeats on either side (then position decides).
fn by_key(ab: &[u8], a: &[&TypedNode], bb: &[u8], b: &[&TypedNode], key: &str) -> Option<Vec<Step>> {
    let mut a_keys: HashMap<String, usize> = HashMap::with_capacity(a.len());
    for (i, n) in a.iter().enumerate() {
        if a_keys.insert(key_of(n, key), i).is_some() {
            return None;
        }
    }
    let mut b_seen: HashMap<String, usize> = HashMap::with_capacity(b.len());
    let mut matched: Vec<(usize, usize)> = Vec::new();
    let mut steps = Vec::with_capacity(a.len().max(b.len()));
    for (j, n) in b.iter().enumerate() {
        let k = key_of(n, key);
        if let Some(&i) = a_keys.get(&k) {
            matched.push((i, j));
        }
        if b_seen.insert(k, j).is_some() {
            return None;
        }
    }
    // Matched elements whose A order is kept (the longest increasing run of A indexes) are in
    // place; the others moved.
    let kept = longest_increasing(&matched.iter().map(|&(i, _)| i).collect::<Vec<_>>());
    let mut a_used = vec![false; a.len()];
    let mut next_match = 0;
    for (j, bj) in b.iter().enumerate() {
        if next_match < matched.len() && matched[next_match].1 == j {
            let (i, _) = matched[next_match];
            a_used[i] = true;
            let equal = whole(ab, a[i]) == whole(bb, bj);
            steps.push(match (equal, kept[next_match]) {
                (true, true) => Step::Same(i, j),
                (true, false) => Step::Moved(i, j),
                (false, _) => Step::Pair(i, j),
            });
            next_match += 1;
        } else {
            steps.push(Step::Added(j));
        }
    }
    steps.extend((0..a.len()).filter(|&i| !a_used[i]).map(Step::Removed));
    Some(steps)
}

/// Which entries of `xs` make up one longest strictly increasing subsequence.
fn longest_increasing(xs: &[usize]) -> Vec<bool> {
    // Patience sorting: tails[k] is the index of the smallest tail of a run of length k+1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; xs.len()];
    for (p, &x) in xs.iter().enumerate() {
        let at = tails.partition_point(|&t| xs[t] < x);
        prev[p] = at.checked_sub(1).map(|q| tails[q]);
        if at == tails.len() {
            tails.push(p);
        } else {
            tails[at] = p;
        }
    }
    let mut keep = vec![false; xs.len()];
    let mut cur = tails.last().copied();
    while let Some(p) = cur {
        keep[p] = true;
        cur = prev[p];
    }
    keep
}

/// Alignment by position: the common prefix and suffix stay, the middle is matched by its
/// longest common subsequence (when small), equal elements elsewhere are moves, and what is
/// left pairs up in order within each gap.
fn by_position(ab: &[u8], a: &[&TypedNode], bb: &[u8], b: &[&TypedNode]) -> Vec<Step> {
    let eq = |i: usize, j: usize| whole(ab, a[i]) == whole(bb, b[j]);
    let mut pre = 0;
    while pre < a.len() && pre < b.len() && eq(pre, pre) {
        pre += 1;
    }
    let mut suf = 0;
    while suf < a.len() - pre && suf < b.len() - pre && eq(a.len() - 1 - suf, b.len() - 1 - suf) {
        suf += 1;
    }
    let (am, bm) = (pre..a.len() - suf, pre..b.len() - suf);
    let ha: Vec<u64> = am.clone().map(|i| hash_of(whole(ab, a[i]))).collect();
    let hb: Vec<u64> = bm.clone().map(|j| hash_of(whole(bb, b[j]))).collect();
    let mut anchors: Vec<(usize, usize)> = (0..pre).map(|i| (i, i)).collect();
    if ha.len().saturating_mul(hb.len()) <= LCS_CELLS {
        let common = lcs(&ha, &hb, |i, j| eq(am.start + i, bm.start + j));
        anchors.extend(common.into_iter().map(|(i, j)| (am.start + i, bm.start + j)));
    }
    anchors.extend((0..suf).map(|k| (a.len() - suf + k, b.len() - suf + k)));

    // Unmatched elements equal to one unmatched on the other side moved.
    let mut a_used = vec![false; a.len()];
    let mut b_step: Vec<Option<Step>> = vec![None; b.len()];
    for &(i, j) in &anchors {
        a_used[i] = true;
        b_step[j] = Some(Step::Same(i, j));
    }
    let mut free_a: HashMap<u64, Vec<usize>> = HashMap::new();
    for i in am.clone().filter(|&i| !a_used[i]).rev() {
        free_a.entry(ha[i - am.start]).or_default().push(i);
    }
    for j in bm.clone() {
        if b_step[j].is_none()
            && let Some(list) = free_a.get_mut(&hb[j - bm.start])
            && let Some(pos) = list.iter().rposition(|&i| eq(i, j))
        {
            let i = list.remove(pos);
            a_used[i] = true;
            b_step[j] = Some(Step::Moved(i, j));
        }
    }

    // What is left pairs up gap by gap (between consecutive anchors), in order.
    let mut steps = Vec::with_capacity(a.len().max(b.len()));
    let (mut ai, mut bj) = (0usize, 0usize);
    let mut bounds = anchors.clone();
    bounds.push((a.len(), b.len()));
    for (na, nb) in bounds {
        let gap_a: Vec<usize> = (ai..na).filter(|&i| !a_used[i]).collect();
        let gap_b: Vec<usize> = (bj..nb).filter(|&j| b_step[j].is_none()).collect();
        for (k, &i) in gap_a.iter().enumerate() {
            match gap_b.get(k) {
                Some(&j) => b_step[j] = Some(Step::Pair(i, j)),
                None => steps.push((bj + k, 2, Step::Removed(i))),
            }
        }
        for &j in gap_b.iter().skip(gap_a.len()) {
            b_step[j] = Some(Step::Added(j));
        }
        ai = na + 1;
        bj = nb + 1;
    }
    steps.extend(b_step.into_iter().enumerate().filter_map(|(j, s)| s.map(|s| (j, 1, s))));
    steps.sort_by_key(|&(j, order, _)| (j, order));
    steps.into_iter().map(|(_, _, s)| s).collect()
}

/// A longest common subsequence of `a` and `b` (hashes; `eq` confirms a match), as index pairs.
fn lcs(a: &[u64], b: &[u64], eq: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return Vec::new();
    }
    // table[i][j]: the LCS length of a[i..] and b[j..].
    let w = m + 1;
    let mut table = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * w + j] = if a[i] == b[j] && eq(i, j) {
                table[(i + 1) * w + j + 1] + 1
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] && table[i * w + j] == table[(i + 1) * w + j + 1] + 1 && eq(i, j) {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}
