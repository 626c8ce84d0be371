"""A local Spark Connect server for the tests: one JVM per test session, on a free loopback port.

Java comes from Debian's OpenJDK: when `java` is missing and we are root with apt-get, the package
is installed; only when that is impossible are the Spark tests skipped, saying why.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

JDK_PACKAGE = "openjdk-17-jre-headless"


def ensure_java() -> str | None:
    """The reason Java cannot be had, or None once `java` runs."""
    if shutil.which("java"):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return f"Java is not installed and cannot be installed here (needs root and apt-get for {JDK_PACKAGE})"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", JDK_PACKAGE]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
        if subprocess.run(install, env=env, capture_output=True).returncode != 0:
            return f"Java is not installed and apt-get could not install {JDK_PACKAGE}"
    return None if shutil.which("java") else f"{JDK_PACKAGE} installed but `java` is not on PATH"


def _die_with_parent() -> None:
    """In the child before exec: a test run that is killed (no fixture teardown) takes the JVM with it.
    spark-submit execs java, so the signal request (Linux PR_SET_PDEATHSIG) reaches the JVM itself."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSparkConnect:
    """`spark-submit` of Spark's own SparkConnectServer (local[2], in-memory catalog, no UI)."""

    def __init__(self):
        import pyspark

        self.home = Path(pyspark.__file__).parent
        self.port = _free_port()
        self.workdir = tempfile.mkdtemp(prefix="tessera-spark-")
        self.log = open(os.path.join(self.workdir, "server.log"), "wb")
        confs = {
            "spark.connect.grpc.binding.address": "127.0.0.1", "spark.connect.grpc.binding.port": str(self.port),
            "spark.ui.enabled": "false", "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.warehouse.dir": os.path.join(self.workdir, "warehouse"), "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2", "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        }
        command = [str(self.home / "bin" / "spark-submit"), "--master", "local[2]",
                   "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
                   "--driver-java-options", f"-Djava.io.tmpdir={self.workdir} -Xss4m",
                   *[arg for key, value in confs.items() for arg in ("--conf", f"{key}={value}")], "spark-internal"]
        env = {**os.environ, "SPARK_HOME": str(self.home), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_LOG_DIR": self.workdir, "SPARK_CONF_DIR": self.workdir}
        env.pop("SPARK_REMOTE", None)
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                        cwd=self.workdir, start_new_session=True, preexec_fn=_die_with_parent)

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def wait(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Spark Connect server exited: {self.tail()}")
            with socket.socket() as s:
                s.settimeout(1)
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.3)
        raise RuntimeError(f"Spark Connect server did not listen within {timeout} s: {self.tail()}")

    def tail(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        # spark-submit's script runs java as its child: stop the whole process group it leads.
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
