// The views the app shows, in navigation order. A view is listed only when it exists: no
// placeholders. Heavy views are lazy so the first page stays light.
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

export interface ViewEntry {
  /** Hash route, e.g. '/system' → '#/system'. */
  path: string;
  label: string;
  /** Short description for the navigation's title attribute. */
  title: string;
  component: LazyExoticComponent<ComponentType> | ComponentType;
}

export const VIEWS: ViewEntry[] = [
  {
    path: '/system',
    label: 'System',
    title: 'GPU adapter, limits, memory and the kernel self-test',
    component: lazy(() => import('./views/SystemView.tsx')),
  },
  {
    path: '/data',
    label: 'Data',
    title: 'Datasets: the default data, import, statistics and export',
    component: lazy(() => import('./views/DataView.tsx')),
  },
  {
    path: '/trajectories',
    label: 'Trajectories',
    title: 'Browse trajectories, mask categories and token loss weights',
    component: lazy(() => import('./views/TrajectoriesView.tsx')),
  },
  {
    path: '/prompts',
    label: 'Prompts',
    title: 'Edit system-prompt templates and raw trajectories',
    component: lazy(() => import('./views/PromptsView.tsx')),
  },
  {
    path: '/playground',
    label: 'Playground',
    title: 'Play an environment against a world model: streamed observations beside the real ones, judged per turn',
    component: lazy(() => import('./views/PlaygroundView.tsx')),
  },
  {
    path: '/train',
    label: 'Train',
    title: 'Train CPT, SFT and RL runs on the GPU; live loss, checkpoints, resume',
    component: lazy(() => import('./views/TrainView.tsx')),
  },
  {
    path: '/bench',
    label: 'Bench',
    title: 'Score checkpoints, endpoints and baselines on held-out turns with a judge (AgentWorldBench)',
    component: lazy(() => import('./views/BenchView.tsx')),
  },
];

export const DEFAULT_VIEW = '/system';
