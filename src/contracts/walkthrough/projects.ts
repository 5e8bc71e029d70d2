import { okTrue, str, is, type Step } from './step.ts';

/** Walkthrough steps: projects, in order. */
export const PROJECT_STEPS: Step[] = [
  // Projects: what work is billed to.
  {
    operationId: 'createProject',
    body: { name: 'Bridge retrofit', code: 'JOB-{{$timestamp}}', hourlyRate: 95 },
    status: 201,
    save: { projectId: 'projectId' },
    checks: [okTrue, str('projectId')],
  },
  {
    operationId: 'listProjects',
    query: { status: 'ACTIVE', limit: '10' },
    status: 200,
    checks: [okTrue, { path: 'projects', type: 'array' }],
  },
  {
    operationId: 'getProject',
    params: { id: '{{projectId}}' },
    status: 200,
    checks: [okTrue, is('project.id', '{{projectId}}')],
  },
  {
    operationId: 'updateProject',
    params: { id: '{{projectId}}' },
    body: { customerName: 'City of Houston' },
    status: 200,
    checks: [okTrue],
  },
  {
    operationId: 'createProjectsBatch',
    body: [{ name: 'Culvert repair' }, { code: 'no name' }],
    status: 200,
    checks: [okTrue, is('results.0.ok', true), str('results.0.projectId'), is('results.1.ok', false)],
  },
];
