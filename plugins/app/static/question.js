// The question pages. An ad-hoc question's link (/question#<base64>) keeps the question in the hash,
// which never reaches the server: this asks /question/adhoc for the page of the question it holds.
// And a chart is drawn on the server in the page's theme, so a theme switch asks for it again.
(function () {
  function show(url) {
    htmx.ajax("GET", url, { target: "#question", select: "#question", swap: "outerHTML" });
  }

  function fromHash() {
    if (location.pathname !== "/question" || !document.getElementById("question")) return;
    var text = location.hash.slice(1);
    try { text = decodeURIComponent(text); } catch (e) { /* left as it is: the server says what is wrong */ }
    show("/question/adhoc?q=" + encodeURIComponent(text));
  }

  fromHash();
  window.addEventListener("hashchange", fromHash);

  // app.js's handler (registered first) has already switched the theme and its cookie.
  document.addEventListener("click", function (event) {
    if (!event.target.closest("[data-theme-toggle]")) return;
    var question = document.getElementById("question");
    if (question && question.dataset.src && question.querySelector(".chart")) show(question.dataset.src);
  });
})();
