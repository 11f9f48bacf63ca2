//! Row filters as operators type them: `type=Insert,vchannel=dml_0,tt=FROM..TO,status=bad`.
//! Shared by `walscope inspect --filter` and the message browser's filter bar.

use super::view::FrameView;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameFilter {
    /// Any of these type names (case-insensitive).
    pub types: Vec<String>,
    /// Substring of the vchannel.
    pub vchannel: Option<String>,
    /// Inclusive timetick range; either end open.
    pub tt_from: Option<u64>,
    pub tt_to: Option<u64>,
    pub status: Option<StatusFilter>,
    pub collection: Option<i64>,
    /// Substring of the summary (case-insensitive).
    pub text: Option<String>,
    /// `chunk=yes`: only frames that are one chunk of a larger payload; `chunk=no`: only those
    /// that are not.
    pub chunk: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    Ok,
    Bad,
    Encrypted,
}

impl FrameFilter {
    pub fn is_empty(&self) -> bool {
        *self == FrameFilter::default()
    }

    /// Parses `key=value` pairs separated by commas. Types may be joined with `|`.
    pub fn parse(spec: &str) -> Result<FrameFilter, String> {
        let mut f = FrameFilter::default();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| format!("filter \"{part}\" is not key=value"))?;
            let v = v.trim();
            match k.trim() {
                "type" => f.types.extend(v.split('|').map(|t| t.trim().to_ascii_lowercase())),
                "vchannel" | "vc" => f.vchannel = Some(v.to_string()),
                "tt" | "time" => {
                    let (a, b) = v.split_once("..").ok_or_else(|| format!("tt=\"{v}\" is not FROM..TO"))?;
                    f.tt_from = parse_time(a, false)?;
                    f.tt_to = parse_time(b, true)?;
                }
                "status" => {
                    f.status = Some(match v {
                        "ok" => StatusFilter::Ok,
                        "bad" => StatusFilter::Bad,
                        "encrypted" => StatusFilter::Encrypted,
                        _ => return Err(format!("status=\"{v}\": use ok, bad or encrypted")),
                    })
                }
                "collection" | "coll" => {
                    f.collection = Some(v.parse().map_err(|_| format!("collection=\"{v}\" is not a number"))?)
                }
                "text" => f.text = Some(v.to_ascii_lowercase()),
                "chunk" | "chunks" => {
                    f.chunk = Some(match v {
                        "yes" | "true" | "1" => true,
                        "no" | "false" | "0" => false,
                        _ => return Err(format!("chunk=\"{v}\": use yes (only chunks) or no (no chunks)")),
                    })
                }
                other => {
                    return Err(format!(
                        "unknown filter key \"{other}\"; use type, vchannel, tt, status, collection, chunk or text"
                    ));
                }
            }
        }
        Ok(f)
    }

    /// Whether a damaged range (bytes that are no frame: no type, channel, time or collection)
    /// is kept: with no filter, with `status=bad`, and with `text=` words its description holds.
    pub fn keeps_damaged(&self, description: &str) -> bool {
        let only_status_and_text = FrameFilter { status: None, text: None, ..self.clone() }.is_empty();
        only_status_and_text
            && self.status.is_none_or(|s| s == StatusFilter::Bad)
            && self.text.as_ref().is_none_or(|t| description.to_ascii_lowercase().contains(t))
    }

    /// What [`FrameFilter::matches`] needs of a view: the summary text only for `text=`.
    pub fn detail(&self) -> crate::wal::Detail {
        match self.text {
            Some(_) => crate::wal::Detail::Full,
            None => crate::wal::Detail::Counts,
        }
    }

    pub fn matches(&self, v: &FrameView) -> bool {
        if let Some(s) = self.status {
            let ok = match s {
                StatusFilter::Ok => !v.status.is_bad(),
                StatusFilter::Bad => v.status.is_bad(),
                StatusFilter::Encrypted => v.status == super::view::FrameStatus::Encrypted,
            };
            if !ok {
                return false;
            }
        }
        if let Some(t) = &self.text
            && !v.summary.to_ascii_lowercase().contains(t)
        {
            return false;
        }
        let needs_wal = !self.types.is_empty()
            || self.vchannel.is_some()
            || self.tt_from.is_some()
            || self.tt_to.is_some()
            || self.collection.is_some()
            || self.chunk.is_some();
        if !needs_wal {
            return true;
        }
        let Some(w) = &v.wal else { return false };
        // `types` are lowercased when parsed; compared without lowercasing each frame's name.
        if !self.types.is_empty() && !self.types.iter().any(|t| t.eq_ignore_ascii_case(&w.type_name)) {
            return false;
        }
        if let Some(vc) = &self.vchannel
            && !w.vchannel.contains(vc.as_str())
        {
            return false;
        }
        if self.collection.is_some() && w.collection != self.collection {
            return false;
        }
        if self.chunk.is_some_and(|c| c != w.chunk.is_some()) {
            return false;
        }
        if self.tt_from.is_some() || self.tt_to.is_some() {
            let Some(tt) = w.timetick else { return false };
            if self.tt_from.is_some_and(|f| tt < f) || self.tt_to.is_some_and(|t| tt > t) {
                return false;
            }
        }
        true
    }
}

/// A timetick bound: a raw timetick, or a UTC wall time `YYYY-MM-DD HH:MM:SS[.mmm]` (also with
/// `T`). `end` makes a wall time cover its whole last millisecond.
pub fn parse_time(s: &str, end: bool) -> Result<Option<u64>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    if let Ok(tt) = s.parse::<u64>() {
        return Ok(Some(tt));
    }
    if let Some(ms) = crate::time::parse_utc(s) {
        let ms = u64::try_from(ms).map_err(|_| format!("\"{s}\" is before 1970"))?;
        return Ok(Some(if end {
            crate::time::last_timetick_of(ms)
        } else {
            crate::time::millis_to_timetick(ms)
        }));
    }
    Err(format!("\"{s}\" is neither a timetick nor a UTC time like 2026-11-30 00:12:01.123"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_ranges_are_kept_by_no_filter_status_bad_and_their_words() {
        let why = "bytes 10..74 skipped (not a frame)";
        let keeps = |spec: &str| FrameFilter::parse(spec).unwrap().keeps_damaged(why);
        assert!(keeps("") && keeps("status=bad") && keeps("text=skipped") && keeps("status=bad,text=NOT A"));
        assert!(!keeps("status=ok") && !keeps("status=encrypted") && !keeps("type=Insert"));
        assert!(!keeps("status=bad,vchannel=dml_0") && !keeps("text=insert") && !keeps("collection=5"));
    }

    #[test]
    fn parses_specs_and_times() {
        let f =
            FrameFilter::parse("type=Insert|Delete, vchannel=dml_0, status=bad, tt=2026-11-30 00:12:01..")
                .unwrap();
        assert_eq!(f.types, ["insert", "delete"]);
        assert_eq!(f.vchannel.as_deref(), Some("dml_0"));
        assert_eq!(f.status, Some(StatusFilter::Bad));
        assert_eq!(f.tt_from, Some(1_795_997_521_000 << 18));
        assert_eq!(f.tt_to, None);
        assert_eq!(
            parse_time("2026-11-30T00:12:01.123", true).unwrap(),
            Some(((1_795_997_521_124u64) << 18) - 1)
        );
        assert!(FrameFilter::parse("color=red").unwrap_err().contains("unknown filter key"));
        assert!(FrameFilter::parse("tt=5").unwrap_err().contains("FROM..TO"));
    }
}
