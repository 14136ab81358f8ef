import { Injectable, type PipeTransform } from '@nestjs/common';
import { requireName } from '@arbor/domain';

/** The domain's naming rule for tags (alphanumerics, "-", "_", ".", 1-64): a 400 that says the rule. */
export function requireTagName(value: string): string {
  return requireName('tag_name', value);
}

/** Tag names in paths follow the naming rule. */
@Injectable()
export class TagNamePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    return requireTagName(value);
  }
}
