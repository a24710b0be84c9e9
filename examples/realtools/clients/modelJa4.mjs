// MODEL, TEST ONLY: the JA4 TLS fingerprints that the real browsers the modelled people stand for
// (clients/personHeaderSets.mjs) present, which their Node connections cannot. These are PUBLISHED
// JA4 values of those browsers (not measured here). Each modelled person sends its browser's value in
// MODEL_JA4_HEADER (lib/stack.mjs), and a door opened for a MODEL class, and for no other, passes it to
// the app in place of the JA4 of the Node connection; a bot's door ignores and removes the header.

/** Published JA4 values, by browser. */
export const PUBLISHED_JA4 = Object.freeze({
  /** Safari on iOS 18 (Apple's network stack). */
  safariIos18: "t13d2014h2_a09f3c656075_e42f34c56612",
  /** Chrome 143 on Android (BoringSSL). */
  chromeAndroid143: "t13d1516h2_8daaf6152771_d8a2da3f94cd",
  /** Firefox 135 on the desktop (NSS). */
  firefox135Desktop: "t13d1717h2_5b57614c22b0_3cbfd9057e0d",
  /** An iOS in-app WebView (WKWebView: Apple's stack, as Safari). No header set models one yet. */
  iosWebView: "t13d2014h2_a09f3c656075_e42f34c56612",
  /** An Android in-app WebView (Chromium's BoringSSL, as Chrome on Android). */
  androidWebView: "t13d1516h2_8daaf6152771_d8a2da3f94cd",
});

/** The JA4 each modelled person's browser presents, by its id in personHeaderSets.mjs. */
export const MODEL_JA4 = Object.freeze({
  "safari-ios": PUBLISHED_JA4.safariIos18,
  firefox: PUBLISHED_JA4.firefox135Desktop,
  "chrome-android": PUBLISHED_JA4.chromeAndroid143,
  "android-webview": PUBLISHED_JA4.androidWebView,
});
