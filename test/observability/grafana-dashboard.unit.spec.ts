import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { register } from 'prom-client';
import { projectRoot } from '@arbor/application';
import { collectProcessMetrics } from '@arbor/observability';

/** Every `expr` of the dashboard's panels (and of their targets). */
function expressions(dashboard: any): string[] {
  const panels: any[] = [...dashboard.panels, ...dashboard.panels.flatMap((panel: any) => panel.panels ?? [])];
  return panels.flatMap((panel) => (panel.targets ?? []).map((target: any) => target.expr as string));
}

/**
 * monitoring/grafana-dashboard.json queries series Arbor serves: a metric renamed or removed
 * in libs/observability fails here, not silently in someone's Grafana.
 */
describe('the Grafana dashboard (monitoring/grafana-dashboard.json)', () => {
  const dashboard = JSON.parse(readFileSync(join(projectRoot(__dirname), 'monitoring', 'grafana-dashboard.json'), 'utf8'));

  it("queries only metrics the processes serve, under their names, with each panel's data source the chosen one", () => {
    collectProcessMetrics();
    const served = new Set(register.getMetricsAsArray().map((metric) => metric.name));
    const queried = new Set(expressions(dashboard).flatMap((expr) => expr.match(/\b(?:arbor|nodejs|process)_[a-z0-9_]+/g) ?? []).map((name) => name.replace(/_(bucket|count|sum)$/, '')));
    expect(queried.size).toBeGreaterThan(10);
    expect([...queried].filter((name) => !served.has(name))).toEqual([]);
    const arborMetrics = [...served].filter((name) => name.startsWith('arbor_'));
    expect(arborMetrics.filter((name) => !queried.has(name))).toEqual([]);
    for (const panel of dashboard.panels.filter((p: any) => p.type !== 'row')) expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
  });
});
