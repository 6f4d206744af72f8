// The error a backend's opener throws when what it was asked to open cannot be opened: a folder
// without its tokenizer, a file that is not one of our checkpoints, a budget that leaves no room
// for a prompt. Its message is written for the user and names the model or the file at fault;
// the jobs worker shows it as it is (src/jobs/host.ts lists it among the errors written for
// the user) and the CLI prints it after the command's name.
export class BackendError extends Error {
  override name = 'BackendError';
  /** What is at fault: the checkpoint, the folder, the settings asked (an output budget), or something else. */
  readonly about: BackendErrorAbout;

  constructor(message: string, about: BackendErrorAbout = 'other') {
    super(message);
    this.about = about;
  }
}

export type BackendErrorAbout = 'checkpoint' | 'folder' | 'settings' | 'other';
