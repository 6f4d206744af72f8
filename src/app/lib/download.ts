// The app's one way to hand the user a file: a download through a temporary object URL. Used by
// the Data view's export and the Train view's checkpoint download.

/** Offers `data` to the user as a download named `fileName`. */
export function saveFile(data: Blob, fileName: string): void {
  const url = URL.createObjectURL(data);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  // Not revoked at once: the browser may read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
