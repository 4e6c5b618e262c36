// Search results quote the text of a page, where formulas are still TeX source (MathJax typesets them on
// the page itself): a snippet would read "\(\|\hat A - A\|_F^2\)". Before Sphinx's search starts (both wait
// for DOMContentLoaded; this listener is registered first), its text extraction is wrapped so that each
// formula is quoted in plain symbols instead ("‖A − A‖_F^2"), without its markup.
(() => {
  const GREEK = {alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε", eta: "η",
    theta: "θ", kappa: "κ", lambda: "λ", mu: "μ", nu: "ν", pi: "π", rho: "ρ", sigma: "σ", tau: "τ", phi: "φ",
    varphi: "φ", chi: "χ", psi: "ψ", omega: "ω", Gamma: "Γ", Delta: "Δ", Theta: "Θ", Lambda: "Λ", Sigma: "Σ",
    Phi: "Φ", Omega: "Ω", le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", to: "→", infty: "∞", cdot: "·",
    times: "×", pm: "±", sum: "Σ", int: "∫", sqrt: "√", approx: "≈", in: "∈", star: "*", ell: "ℓ"};
  const plain = (tex) => tex
    .replace(/^\\[([]|\\[)\]]$/g, "")
    .replace(/\\([A-Za-z]+)/g, (m, name) => GREEK[name] ?? "")
    .replace(/\\[|]/g, "‖").replace(/\\[,;!: ]/g, " ")
    .replace(/[{}]/g, "").replace(/\s+/g, " ").trim();
  document.addEventListener("DOMContentLoaded", () => {
    if (typeof Search === "undefined" || !Search.htmlToText) return;  // not the search page
    const extract = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math").forEach((el) => { el.textContent = plain(el.textContent); });
      return extract(doc.documentElement.outerHTML, anchor);
    };
  });
})();
