// Sharing: the whole state lives in the URL hash (#v1=...); "Short link" stores it on the server.

import * as api from "./api.js";
import { linkFor, shareable } from "./state.js";

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (e) {
    return false;   // no clipboard permission (e.g. plain http on another host): the toast shows the link
  }
}

export async function shareLink() {
  return linkFor(shareable(), "/");
}

export async function embedLink() {
  return linkFor(shareable(), "/embed");
}

export async function shortLink() {
  const { url } = await api.share(shareable());
  return `${location.origin}${url}`;
}
