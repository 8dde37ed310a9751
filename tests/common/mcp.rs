//! A line-by-line MCP client for `git lynx serve` over stdio.

use super::TestRepo;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

pub struct Client {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
    pub next: u64,
    /// The server's answer to `initialize`.
    pub init: Value,
}

impl Client {
    pub fn start(r: &TestRepo, extra: &[&str]) -> Client {
        let mut args = vec!["--no-dense", "serve"];
        args.extend_from_slice(extra);
        Self::spawn(r, &args)
    }

    /// A server with the default model choice (none is available to tests).
    pub fn start_with_default_model(r: &TestRepo) -> Client {
        Self::spawn(r, &["serve"])
    }

    pub fn spawn(r: &TestRepo, args: &[&str]) -> Client {
        Self::spawn_cmd(r.cmd(args).stderr(Stdio::null()))
    }

    /// A server whose debug log goes to `log`.
    pub fn spawn_logging(r: &TestRepo, args: &[&str], log: &std::path::Path) -> Client {
        let file = std::fs::File::create(log).unwrap();
        Self::spawn_cmd(r.cmd(args).env("LYNX_LOG", "lynx=debug").stderr(file))
    }

    fn spawn_cmd(cmd: &mut std::process::Command) -> Client {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client { child, stdin, stdout, next: 1, init: Value::Null };
        let init = c.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}));
        assert_eq!(init["result"]["serverInfo"]["name"], "git-lynx", "{init}");
        assert!(init["result"]["instructions"].as_str().unwrap().contains("search"));
        c.notify("notifications/initialized");
        c.init = init;
        c
    }

    pub fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str) {
        self.send(json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Sends a request and reads until its response (responses may come out of order).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "server closed stdout");
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a non-JSON-RPC line ({e}): {line}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    pub fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let r = &v["result"];
        assert!(r.is_object(), "{v}");
        (r["content"][0]["text"].as_str().unwrap_or("").to_string(), r["isError"] == true)
    }

    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}
