// Google's answer to /auth/google comes back in this page's fragment (#id_token=...&state=...), which
// only the browser sees: this hands it to POST /auth/google/callback and follows where that says to go.
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
  var status = document.getElementById("google-status");
  history.replaceState(null, "", window.location.pathname);  // the token leaves the address bar and history
  function fail(message) {
    status.textContent = message;
    status.setAttribute("role", "alert");
    document.getElementById("google-retry").hidden = false;
  }
  if (params.get("error")) {
    fail("Google did not sign you in: " + params.get("error") + ".");
    return;
  }
  fetch("/auth/google/callback", {
    method: "POST",
    credentials: "same-origin",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({id_token: params.get("id_token") || "", state: params.get("state") || ""})
  }).then(function (response) {
    return response.json().then(function (body) {
      if (response.ok && body.location) {
        window.location.replace(body.location);
      } else {
        fail(body.message || "Signing in with Google failed.");
      }
    });
  }).catch(function () {
    fail("Signing in with Google failed: the server could not be reached.");
  });
})();
