//! GetReplicateInfo asked with a pchannel that is not a read-write pchannel of the cluster
//! asked: recognised here, once, from the failure (its words or its code: [`refusal_of`], which
//! `net`'s `NetError::pchannel_refusal` reads a failed call with), and explained in words the
//! CLI, the salvage and the window all show ([`PchannelRefusal::words`]).
//!
//! Upstream (`internal/streamingnode/client/handler/handler_client_impl.go`,
//! `GetSalvageCheckpoint`): a pchannel the cluster has no assignment for (another cluster's
//! pchannel name, say the old primary's) or one assigned read-only is *retried* (the
//! streaming error "salvage checkpoint can only be read for RW channel" is of code
//! `STREAMING_CODE_INNER`, not unrecoverable) until the caller's deadline: the words stay in the
//! server's log and the client sees DEADLINE_EXCEEDED. A server that surfaces the words is
//! recognised by them too. pymilvus 3.0.2's docstring says to ask the old primary with the
//! source's pchannel: that is the mistake this module exists to name.
//!
//! Must never: call a failure of another method this refusal, or drop the server's own words
//! (the explanation is said next to them, not instead of them).

/// The words upstream's streaming layer gives the refusal (GetSalvageCheckpoint says
/// "salvage checkpoint …", GetReplicateCheckpoint "replicate checkpoint …").
pub const RW_REFUSAL_WORDS: &str = "can only be read for RW channel";

/// What to do instead, said plainly.
pub const ASK_THE_NEW_PRIMARY: &str = "GetReplicateInfo must be asked of the NEW primary, with one of \
     ITS pchannels (the old primary's pchannel names are what the checkpoint returns, for \
     DumpMessages on the old primary). pymilvus's docstring says the opposite; it is wrong.";

/// How the refusal reached the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PchannelRefusal {
    /// The server said it: "… can only be read for RW channel".
    Said,
    /// No answer in time: upstream retries a pchannel that is not a read-write one of the
    /// cluster asked until the caller's deadline (as 2.6.9–2.6.18 also hang, milvus#50344).
    NoAnswer,
}

impl PchannelRefusal {
    /// The explanation, for a line of its own under the failure.
    pub fn words(self) -> String {
        match self {
            PchannelRefusal::Said => format!(
                "The server refused the pchannel: it is not a read-write pchannel of the cluster asked. \
                 {ASK_THE_NEW_PRIMARY}"
            ),
            PchannelRefusal::NoAnswer => format!(
                "A server retries GetReplicateInfo until the deadline when target_pchannel is not a \
                 read-write pchannel of the cluster asked (another cluster's pchannel name, e.g. the old \
                 primary's), so a wrong pchannel looks like a hang (Milvus 2.6.9–2.6.18 also hang here, \
                 milvus#50344). {ASK_THE_NEW_PRIMARY}"
            ),
        }
    }
}

/// The refusal in a failure of `method` (a method name, bare or full) with gRPC `code` (its
/// upper-case name) and the server's `message`; None for anything else.
pub fn refusal_of(method: &str, code: &str, message: &str) -> Option<PchannelRefusal> {
    if !method.ends_with("GetReplicateInfo") {
        return None;
    }
    if message.contains(RW_REFUSAL_WORDS) {
        Some(PchannelRefusal::Said)
    } else if code == "DEADLINE_EXCEEDED" {
        Some(PchannelRefusal::NoAnswer)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const METHOD: &str = "milvus.proto.milvus.MilvusService.GetReplicateInfo";

    /// The words in any code, and a deadline, of GetReplicateInfo only; the explanation names
    /// the new primary, its pchannels, and says pymilvus's docstring is wrong.
    #[test]
    fn the_refusal_is_recognised_by_its_words_or_the_deadline() {
        let said = "code: STREAMING_CODE_INNER, cause: salvage checkpoint can only be read for RW channel";
        assert_eq!(refusal_of(METHOD, "UNKNOWN", said), Some(PchannelRefusal::Said));
        assert_eq!(refusal_of("GetReplicateInfo", "DEADLINE_EXCEEDED", ""), Some(PchannelRefusal::NoAnswer));
        assert_eq!(refusal_of(METHOD, "UNAVAILABLE", "gone"), None);
        assert_eq!(refusal_of("milvus.proto.milvus.MilvusService.DumpMessages", "UNKNOWN", said), None);
        for r in [PchannelRefusal::Said, PchannelRefusal::NoAnswer] {
            let w = r.words();
            for needle in ["NEW primary", "ITS pchannels", "pymilvus's docstring says the opposite"] {
                assert!(w.contains(needle), "{needle}: {w}");
            }
        }
    }
}
