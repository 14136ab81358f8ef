/**
 * What a route changes, for the role rule (org-roles.ts): the kind of resource and, by
 * convention, the path parameters naming it.
 *
 * | kind          | path parameters          | owner                                         |
 * |---------------|--------------------------|-----------------------------------------------|
 * | vm            | vm_id                    | the user of the VM's `owner_id` key           |
 * | vm_or_commit  | vm_or_commit_id          | a VM as above; a commit is only read (branch) |
 * | commit        | commit_id                | the user of the commit's `owner_id` key       |
 * | commit_tag    | tag_name                 | the user of the key that created the tag      |
 * | repository    | repo_name                | the user of the key that created it           |
 * | repo_tag      | repo_name, tag_name      | the user of the key that created the tag      |
 * | webhook       | webhook_id               | the user of the key that registered it        |
 * | api_key       | key_id                   | the key's own user                            |
 * | domain        | domain_id                | the user of the key that added it             |
 * | image         | base_image_id            | the user of the key that asked for it         |
 */
export type ChangedResource = 'vm' | 'vm_or_commit' | 'commit' | 'commit_tag' | 'repository' | 'repo_tag' | 'webhook' | 'api_key' | 'domain' | 'image';

export const CHANGES = 'arbor:changes';
export const ANY_MEMBER = 'arbor:any-member';
