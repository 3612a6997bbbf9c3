//! The answers hyper writes itself, before any route sees the request — a
//! request target over its fixed 64 KiB (414), headers past its buffer
//! (431), a byte HTTP forbids in a header (400) — carry the API's JSON error
//! body like every other answer. The connection's writes are watched for
//! such an error head with `content-length: 0` (the API's own error answers
//! always have a body, so a bodiless one is hyper's) and it is written out
//! with a body instead. Every other write goes straight through.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll, ready},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Heads longer than this are never hyper's bare error answers.
const MAX_ERROR_HEAD: usize = 1024;

pub struct JsonParseErrors<S> {
    inner: S,
    /// A rewritten answer still to write, and how much of it is written.
    pending: Vec<u8>,
    written: usize,
}

impl<S> JsonParseErrors<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            written: 0,
        }
    }
}

/// hyper's bare error head, rewritten with a JSON body; `None` for anything else.
fn rewrite(bytes: &[u8]) -> Option<Vec<u8>> {
    // Cheap checks first: every response head passes through here.
    if bytes.len() > MAX_ERROR_HEAD || !bytes.starts_with(b"HTTP/1.") || !bytes.ends_with(b"\r\n\r\n") {
        return None;
    }
    let head = std::str::from_utf8(bytes).ok()?;
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| head.strip_prefix("HTTP/1.0 "))?
        .get(..3)?;
    let (code, message) = match status {
        "400" => (
            "bad_request",
            "the request is not valid HTTP (a byte HTTP forbids in a header, say)",
        ),
        "414" => ("uri_too_long", "the request target is over 64 KiB"),
        "431" => (
            "headers_too_large",
            "the request's headers are too large or too many",
        ),
        _ => return None,
    };
    const EMPTY: &str = "\r\ncontent-length: 0\r\n";
    let at = head.to_ascii_lowercase().find(EMPTY)?;
    let body =
        serde_json::json!({"error": {"code": code, "message": message, "requestId": null}}).to_string();
    let mut out = String::with_capacity(head.len() + body.len() + 48);
    out.push_str(&head[..at]);
    out.push_str(&format!(
        "\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    ));
    out.push_str(&head[at + EMPTY.len()..]);
    out.push_str(&body);
    Some(out.into_bytes())
}

impl<S: AsyncWrite + Unpin> JsonParseErrors<S> {
    /// Writes what is pending; ready once nothing is.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }

    /// Takes `bytes` as a rewritten answer (all of them consumed), when it is one.
    fn take_error_head(&mut self, cx: &mut Context<'_>, bytes: &[u8]) -> Option<Poll<io::Result<usize>>> {
        let rewritten = rewrite(bytes)?;
        self.pending = rewritten;
        self.written = 0;
        Some(match self.drain(cx) {
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            // Consumed: the rest is written by the next write, flush or shutdown.
            _ => Poll::Ready(Ok(bytes.len())),
        })
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonParseErrors<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonParseErrors<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(done) = self.take_error_head(cx, buf) {
            return done;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        // hyper's error head is one buffer with nothing after it.
        let mut written = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (written.next(), written.next())
            && let Some(done) = self.take_error_head(cx, only)
        {
            return done;
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn only_bodiless_parse_error_heads_are_rewritten() {
        let bare =
            b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: Fri, 27 Nov 2026 21:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(rewrite(bare).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        assert!(
            head.contains("content-type: application/json") && head.contains("date: "),
            "{head}"
        );
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"]["code"], "uri_too_long");

        // The API's own answers (a body), other statuses and partial heads pass.
        assert!(rewrite(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 52\r\n\r\n").is_none());
        assert!(rewrite(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(rewrite(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n").is_none());
        assert!(rewrite(b"{\"HTTP/1.1 400 \": 1}").is_none());
    }
}
