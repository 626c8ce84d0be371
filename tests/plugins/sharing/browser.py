"""A headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: commands
on fd 3, answers on fd 4, each JSON message ended by a NUL byte), and the real app served on a loopback
port, for the page tests. No WebDriver, no websocket library: the protocol is a few JSON messages.

Debian's `chromium` package provides the browser (`make test-setup` installs it when it can); without
it the browser tests skip, naming the package.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import signal
import tempfile
import threading
import time

from werkzeug.serving import make_server

BROWSERS = ("chromium", "chromium-browser")


def chromium_path() -> str | None:
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


class Server:
    """The app on 127.0.0.1:<free port> in a thread (werkzeug, threaded), as a browser reaches it."""

    def __init__(self, app):
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class Browser:
    def __init__(self, executable: str, width: int = 1280, height: int = 900):
        self.profile = tempfile.mkdtemp(prefix="tessera-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        args = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                "--remote-debugging-pipe", f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
                "about:blank"]
        # Chromium wants the pipe ends as fds 3 and 4. posix_spawn places them there in the child (a
        # preexec_fn would not be safe with the server's threads); copies above 9 first, so that moving
        # one end onto 3 or 4 can never overwrite the other.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)]
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        actions = [(os.POSIX_SPAWN_DUP2, high[0], 3), (os.POSIX_SPAWN_DUP2, high[1], 4),
                   (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
        # In a session of its own, so that no signal to its process group can reach the test process: a
        # SIGINT of unknown origin once reached a pytest-xdist worker mid-run, and Chromium (with its
        # zygote and renderers) was the one long-lived child sharing the worker's group.
        self.pid = os.posix_spawn(executable, args, os.environ, file_actions=actions, setsid=True)
        for fd in high:
            os.close(fd)
        self.buffer = b""
        self.next_id = 0
        self.session = None
        self.size = (width, height)
        self.events: list[dict] = []  # the protocol's events read while waiting for answers

    def __enter__(self):
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", width=self.size[0], height=self.size[1], deviceScaleFactor=1,
                  mobile=False)
        return self

    def __exit__(self, *exc):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        self._reap(timeout=5)
        for fd in (self.to_browser, self.from_browser):
            os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _reap(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if os.waitpid(self.pid, os.WNOHANG) != (0, 0):
                return
            time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: bool = True, timeout: float = 30, **params) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if "method" in answer:
                self.events.append(answer)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def poll(self, expression: str):
        """evaluate() for a wait: None while the page is between two documents, where Chromium answers
        "Inspected target navigated or closed" or the expression meets no body yet."""
        try:
            return self.evaluate(expression)
        except RuntimeError:
            return None

    def wait_for(self, expression: str, timeout: float = 15, what: str | None = None):
        """The first truthy value of `expression`, polled every 50 ms."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.poll(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"{what or expression}: {self.text()[:500]}")

    def open(self, url: str, timeout: float = 40) -> str:
        """Load `url` and wait until the page says it settled (#page data-state ready or error). Going
        through about:blank first makes a change of the hash alone a new load, not a hashchange."""
        self.send("Page.navigate", url="about:blank")
        self.send("Page.navigate", url=url)
        return self.wait_settled(timeout)

    def wait_settled(self, timeout: float = 40) -> str:
        deadline = time.monotonic() + timeout
        state = None
        while time.monotonic() < deadline:
            state = self.poll("document.readyState === 'complete' && document.getElementById('page')"
                                  " ? document.getElementById('page').dataset.state : null")
            if state in ("ready", "error"):
                return state
            time.sleep(0.1)
        raise TimeoutError(f"the page did not settle (state {state!r}): {self.text()[:500]}")

    def watch_errors(self) -> None:
        """From now on keep the page's uncaught exceptions, console errors and browser-logged errors
        (Content-Security-Policy refusals, failed loads) in `events`, for `errors()`."""
        self.send("Runtime.enable")
        self.send("Log.enable")

    def errors(self) -> list[str]:
        """The errors the page reported since `watch_errors` (and clears them)."""
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                found.append(params.get("exceptionDetails", {}).get("exception", {}).get("description", "exception"))
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(" ".join(str(arg.get("value", arg.get("description"))) for arg in params.get("args", [])))
            elif event["method"] == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                found.append(f"{entry.get('text')} ({entry.get('url', '')})")
        self.events.clear()
        return found

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def screenshot(self, scale: float = 0.25) -> bytes:
        """A PNG of the viewport, scaled down (the tests look at its colours, not its details)."""
        width, height = self.size
        result = self.send("Page.captureScreenshot", format="png",
                           clip={"x": 0, "y": 0, "width": width, "height": height, "scale": scale})
        return base64.b64decode(result["data"])
