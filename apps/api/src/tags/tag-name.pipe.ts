import { Injectable, type PipeTransform } from '@nestjs/common';
import { invalid, TAG_NAME_PATTERN } from '@arbor/domain';

/** The domain's naming rule for tags (alphanumerics, "-", "_", ".", 1-64): a 400 that says the rule. */
export function requireTagName(value: string): string {
  if (!TAG_NAME_PATTERN.test(value)) throw invalid('tag_name may hold only letters, digits, ".", "_" and "-" (1-64 characters)');
  return value;
}

/** Tag names in paths follow the naming rule. */
@Injectable()
export class TagNamePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    return requireTagName(value);
  }
}
