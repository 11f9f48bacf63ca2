//! brpc baidu_std ("PRPC") over TCP. See `codec` for the framing; the client multiplexes calls
//! on one connection by correlation id.
