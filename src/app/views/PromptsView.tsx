// Prompts: the system-prompt template editor (Monaco, loaded with this view's first editor) and
// the raw-trajectory JSON editor. The URL names the mode and the trajectory being edited.
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { DatasetError, useDatasets } from '../components/DatasetGate.tsx';
import { RawTrajectoryEditor } from './prompts/RawTrajectoryEditor.tsx';
import { TemplateEditor } from './prompts/TemplateEditor.tsx';
import { OptimizeView } from './prompts/OptimizeView.tsx';

/** The Optimize tab's path as it was spelt before: links and bookmarks saved then still open the tab (redirected). */
const OLD_OPTIMIZE_PATH = '/optimise'; // old spelling, read for stored data

/** Sends an old-spelling path to the same place under /optimize (a template version's name included, as it was encoded). */
function OldOptimizePath() {
  const [location] = useLocation();
  return <Redirect to={`/optimize${location.slice(OLD_OPTIMIZE_PATH.length)}`} replace />;
}

function Tabs() {
  const [location] = useLocation();
  const raw = location.startsWith('/raw');
  const optimize = location.startsWith('/optimize');
  return (
    <nav className="tabs" aria-label="Prompt editor modes">
      <Link href="/" className="tab" aria-current={!raw && !optimize ? 'page' : undefined}>
        Templates
      </Link>
      <Link href="/optimize" className="tab" aria-current={optimize ? 'page' : undefined}>
        Optimize
      </Link>
      <Link href="/raw" className="tab" aria-current={raw ? 'page' : undefined}>
        Raw trajectory
      </Link>
    </nav>
  );
}

export default function PromptsView() {
  useDatasets();
  return (
    <section className="view" aria-labelledby="prompts-title">
      <h1 id="prompts-title">Prompts</h1>
      <DatasetError />
      <Tabs />
      <Switch>
        <Route path="/raw/:id">{(p) => <RawTrajectoryEditor id={p.id} />}</Route>
        <Route path="/optimize/:from">{(p) => <OptimizeView from={p.from} />}</Route>
        <Route path="/optimize">
          <OptimizeView />
        </Route>
        <Route path={`${OLD_OPTIMIZE_PATH}/:from`}>
          <OldOptimizePath />
        </Route>
        <Route path={OLD_OPTIMIZE_PATH}>
          <OldOptimizePath />
        </Route>
        <Route path="/raw">
          <RawTrajectoryEditor />
        </Route>
        <Route>
          <TemplateEditor />
        </Route>
      </Switch>
    </section>
  );
}
