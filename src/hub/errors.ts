// The error the Hub downloader throws: written for the user, naming the model id (never a token),
// one paragraph. `about` says what went wrong so a caller can choose its exit path without reading words.
export class HubError extends Error {
  override name = 'HubError';
  readonly about: HubErrorAbout;

  constructor(message: string, about: HubErrorAbout) {
    super(message);
    this.about = about;
  }
}

/**
 * id: not a model id; auth: gated or private, a token is needed or was refused; missing: no such
 * repo, revision or file; network: the endpoint cannot be reached or answered oddly; offline: not
 * in the cache while offline; integrity: a file's size or checksum is not what the Hub said;
 * listing: the Hub's file listing or headers are malformed or hostile; storage: the cache cannot be written.
 */
export type HubErrorAbout = 'id' | 'auth' | 'missing' | 'network' | 'offline' | 'integrity' | 'listing' | 'storage';
