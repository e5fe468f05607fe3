import type { FileLinker } from '../../../errors/index.js';
import type { Profile } from '../../profile.js';
import type { ProfilerUrls } from '../urls.js';

/** What every panel renderer is given. */
export interface PanelContext {
  profile: Profile;
  urls: ProfilerUrls;
  /** IANA time zone for times; undefined: the server's local time. */
  timeZone: string | undefined;
  /** Links stack frames to the developer's editor; null: no links. */
  fileLink: FileLinker | null;
}
