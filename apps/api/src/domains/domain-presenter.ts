import type { DomainResponseDto } from '@arbor/contracts';
import type { DomainDocument } from '@arbor/read-models';

export function presentDomain(doc: DomainDocument): DomainResponseDto {
  return { domain_id: doc.domain_id, vm_id: doc.vm_id, domain: doc.domain, created_at: doc.created_at };
}
