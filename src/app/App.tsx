import { Suspense } from 'react';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter';
import { useHashLocation } from 'wouter/use-hash-location';
import { QuotaWarningDialog } from './components/QuotaWarningDialog.tsx';
import { DEFAULT_VIEW, VIEWS } from './views.tsx';

function Nav() {
  const [location] = useLocation();
  return (
    <nav className="nav" aria-label="Views">
      {VIEWS.map((v) => {
        const active = location === v.path || location.startsWith(v.path + '/');
        return (
          <Link key={v.path} href={v.path} className={active ? 'nav-link active' : 'nav-link'} aria-current={active ? 'page' : undefined} title={v.title}>
            {v.label}
          </Link>
        );
      })}
    </nav>
  );
}

function NotFound() {
  const [location] = useLocation();
  return (
    <section className="view">
      <h1>No such view</h1>
      <p>
        Nothing lives at <code>#{location}</code>. <Link href={DEFAULT_VIEW}>Go to System</Link>.
      </p>
    </section>
  );
}

export function App() {
  return (
    // Hash routing: the URL names the view and the app works from any static sub-path.
    <Router hook={useHashLocation}>
      <header className="header">
        <a className="brand" href="#/system" aria-label="LWM Studio home">
          <img src="./favicon.svg" alt="" width={22} height={22} />
          <span>LWM Studio</span>
        </a>
        <Nav />
      </header>
      <main className="main">
        <Suspense fallback={<p className="loading">Loading view…</p>}>
          <Switch>
            <Route path="/">
              <Redirect to={DEFAULT_VIEW} replace />
            </Route>
            {VIEWS.map((v) => (
              <Route key={v.path} path={v.path} nest>
                <v.component />
              </Route>
            ))}
            <Route>
              <NotFound />
            </Route>
          </Switch>
        </Suspense>
      </main>
      <QuotaWarningDialog />
    </Router>
  );
}
